import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { createDirectory, USER } from '../scim/helpers.js';

interface Ev {
  id: string;
  type: string;
  organization_id: string | null;
  actor: { type: string; id: string | null };
}

/** Every page of a query, following next_cursor. */
async function readAll(api: Api, query: string, limit: number): Promise<Ev[]> {
  const out: Ev[] = [];
  let cursor: string | null = null;
  for (;;) {
    const r = await api('GET', `/events?limit=${limit}${query}${cursor ? `&after=${cursor}` : ''}`);
    assert.equal(r.status, 200, r.text);
    const body = r.json() as { data: Ev[]; next_cursor: string | null; has_more: boolean };
    out.push(...body.data);
    if (!body.has_more) return out;
    assert.ok(body.next_cursor);
    cursor = body.next_cursor;
  }
}

// /v1/events: the actor filter (actor_type, actor_id) and order=asc|desc (docs/events.md).
describe('/v1/events actor filter and order', () => {
  let s: TestServer;
  let api: Api;
  let second: Api;
  let secondKeyId: string;
  let orgId: string;
  let connectionId: string;

  before(async () => {
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
    const k = await api('POST', '/api_keys', { name: 'second', scopes: ['users:write', 'organizations:write'] });
    assert.equal(k.status, 201, k.text);
    secondKeyId = k.json().id;
    second = v1(s, k.json().key);
    for (let i = 0; i < 7; i++) {
      assert.equal((await api('POST', '/users', { email: `first-${i}@example.com` })).status, 201);
      assert.equal((await second('POST', '/users', { email: `second-${i}@example.com` })).status, 201);
    }
    const dir = await createDirectory(s);
    orgId = dir.orgId;
    connectionId = dir.connectionId;
    for (let i = 0; i < 3; i++) assert.equal((await dir.scim('POST', '/Users', { schemas: [USER], userName: `scim-${i}@corp.example` })).status, 201);
  });
  after(() => s.close());

  it('order=desc reads newest first and pages back in time: the reverse of asc, no loss or repeat', async () => {
    const asc = await readAll(api, '', 4);
    const desc = await readAll(api, '&order=desc', 4);
    assert.ok(asc.length > 20);
    assert.deepEqual(
      desc.map((e) => e.id),
      asc.map((e) => e.id).reverse(),
    );
    assert.deepEqual(
      (await readAll(api, '&order=asc', 5)).map((e) => e.id),
      asc.map((e) => e.id),
    );
  });

  it('order=desc after a cursor continues with older events; at the oldest, next_cursor stays the cursor', async () => {
    const asc = await readAll(api, '', 100);
    const middle = asc[10]!;
    const r = await api('GET', `/events?order=desc&limit=3&after=${middle.id}`);
    assert.deepEqual(
      r.json().data.map((e: Ev) => e.id),
      [asc[9]!.id, asc[8]!.id, asc[7]!.id],
    );
    assert.equal(r.json().next_cursor, asc[7]!.id);
    assert.equal(r.json().has_more, true);
    const oldest = await api('GET', `/events?order=desc&after=${asc[0]!.id}`);
    assert.deepEqual(oldest.json(), { data: [], next_cursor: asc[0]!.id, has_more: false });
  });

  it('actor_type and actor_id filter on the server, in both orders and across pages', async () => {
    const byKey = await readAll(api, `&actor_type=api_key&actor_id=${secondKeyId}`, 3);
    assert.equal(byKey.length, 7);
    assert.ok(byKey.every((e) => e.actor.type === 'api_key' && e.actor.id === secondKeyId && e.type === 'user.created'));
    const byKeyDesc = await readAll(api, `&actor_type=api_key&actor_id=${secondKeyId}&order=desc`, 3);
    assert.deepEqual(
      byKeyDesc.map((e) => e.id),
      byKey.map((e) => e.id).reverse(),
    );

    const keys = await readAll(api, '&actor_type=api_key', 50);
    assert.ok(keys.length > byKey.length);
    assert.ok(keys.every((e) => e.actor.type === 'api_key'));

    const scim = await readAll(api, `&actor_type=scim&actor_id=${connectionId}&types=user.created`, 2);
    assert.equal(scim.length, 3);
    assert.ok(scim.every((e) => e.actor.id === connectionId));

    // Filters combine with types and organization_id.
    const orgScim = await readAll(api, `&actor_type=scim&organization_id=${orgId}`, 100);
    assert.ok(orgScim.length >= 3 && orgScim.every((e) => e.organization_id === orgId && e.actor.type === 'scim'));
    assert.deepEqual(await readAll(api, `&actor_type=user`, 100), []);
    // An OAuth client's id may be a URL (client ID metadata documents).
    assert.deepEqual(await readAll(api, `&actor_type=oauth_client&actor_id=${encodeURIComponent('https://app.example/client.json')}`, 10), []);
  });

  it('an organization-bound key filters by actor only among its organization', async () => {
    const k = await api('POST', `/organizations/${orgId}/api_keys`, { name: 'org', scopes: ['events:read'] });
    const org = v1(s, k.json().key);
    const mine = await readAll(org, `&actor_type=scim&actor_id=${connectionId}&order=desc`, 2);
    assert.ok(mine.length >= 3 && mine.every((e) => e.organization_id === orgId));
    assert.deepEqual(await readAll(org, `&actor_type=api_key&actor_id=${secondKeyId}`, 10), []);
  });

  it('a bad actor filter or order is 400 invalid_request', async () => {
    const bad = [
      'actor_type=robot',
      'actor_type=',
      'actor_type=User',
      `actor_id=${secondKeyId}`,
      'actor_type=user&actor_id=key_0000000000000000000000000',
      'actor_type=api_key&actor_id=user_0000000000000000000000000',
      'actor_type=scim&actor_id=org_0000000000000000000000000',
      'actor_type=system&actor_id=has%20space',
      'actor_type=system&actor_id=',
      `actor_type=oauth_client&actor_id=${'a'.repeat(2049)}`,
      'order=sideways',
      'order=DESC',
      'order=',
      'actor=api_key',
    ];
    for (const q of bad) {
      const r = await api('GET', `/events?${q}`);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(r.json().error, 'invalid_request', q);
      assert.ok(r.json().error_description, q);
    }
    const described = await api('GET', `/events?actor_id=${secondKeyId}`);
    assert.match(described.json().error_description, /actor_id: needs actor_type/);
    const unknown = await api('GET', '/events?order=desc&after=evt_0000000000000000000000000');
    expectError(unknown, 400, 'invalid_request');
  });
});
