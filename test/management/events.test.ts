import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

interface Ev {
  id: string;
  type: string;
  organization_id: string | null;
  data: Record<string, unknown>;
}

async function readAll(api: Api, query = '', limit = 37): Promise<Ev[]> {
  const out: Ev[] = [];
  let cursor: string | null = null;
  for (;;) {
    const r = await api('GET', `/events?limit=${limit}${query}${cursor ? `&after=${cursor}` : ''}`);
    assert.equal(r.status, 200, r.text);
    const body = r.json() as { data: Ev[]; next_cursor: string | null; has_more: boolean };
    out.push(...body.data);
    if (!body.has_more) return out;
    cursor = body.next_cursor;
  }
}

describe('/v1/events', () => {
  let s: TestServer;
  let api: Api;
  let orgA: string;
  let orgB: string;
  before(async () => {
    s = await startTestServer();
    api = v1(s, s.tenant.platformApiKey);
    orgA = (await api('POST', '/organizations', { name: 'A' })).json().id;
    orgB = (await api('POST', '/organizations', { name: 'B' })).json().id;
  });
  after(() => s.close());

  it('pages through 250 events with `after` without loss or duplicates', async () => {
    const expected = new Set<string>();
    for (let i = 0; i < 25; i++) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => api('POST', '/users', { email: `u${i}-${j}@example.com` })));
      for (const r of batch) expected.add(r.json().id);
    }
    const events = await readAll(api, '&types=user.created');
    assert.equal(events.length, 250);
    assert.equal(new Set(events.map((e) => e.id)).size, 250);
    assert.deepEqual(new Set(events.map((e) => e.data.user_id)), expected);
  });

  it('a poller reading while writers write never skips an event', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let writing = true;
    const writers = (async () => {
      for (let i = 0; i < 30; i++) {
        await Promise.all([api('POST', '/organizations', { name: `W${i}` }), api('POST', '/organizations', { name: `X${i}` })]);
      }
      writing = false;
    })();
    const poll = async () => {
      const r = await api('GET', `/events?types=organization.created&limit=5${cursor ? `&after=${cursor}` : ''}`);
      const body = r.json() as { data: Ev[]; next_cursor: string | null };
      seen.push(...body.data.map((e) => e.id));
      cursor = body.next_cursor;
      return body.data.length;
    };
    while (writing) await poll();
    await writers;
    while ((await poll()) > 0);
    const all = (await readAll(api, '&types=organization.created')).map((e) => e.id);
    assert.deepEqual(seen, all);
  });

  it('returns events oldest first with the documented shape', async () => {
    const r = await api('GET', '/events?limit=3');
    const { data, next_cursor } = r.json();
    assert.equal(data.length, 3);
    assert.equal(next_cursor, data[2].id);
    assert.deepEqual(Object.keys(data[0]).sort(), ['actor', 'created', 'data', 'id', 'organization_id', 'type']);
    assert.equal(data[0].type, 'organization.created');
    const empty = await api('GET', `/events?after=${(await readAll(api)).at(-1)?.id}`);
    assert.deepEqual(empty.json().data, []);
    assert.ok(empty.json().next_cursor, 'the cursor is kept when nothing is new');
  });

  it('an org-bound key sees only its own organization', async () => {
    await api('POST', `/organizations/${orgB}/api_keys`, { name: 'b', scopes: ['events:read'] });
    const key = (await api('POST', `/organizations/${orgA}/api_keys`, { name: 'a', scopes: ['events:read'] })).json().key;
    const orgApi = v1(s, key);
    const events = await readAll(orgApi);
    assert.ok(events.length > 0, 'events.length > 0');
    for (const e of events) assert.equal(e.organization_id, orgA);
    expectError(await orgApi('GET', `/events?organization_id=${orgB}`), 403, 'forbidden');
    // Another organization's event id is no cursor for this key (it would reveal the event).
    const bEvent = (await readAll(api, `&organization_id=${orgB}`))[0]!.id;
    expectError(await orgApi('GET', `/events?after=${bEvent}`), 400, 'invalid_request');
    const platformView = await readAll(api, `&organization_id=${orgB}`);
    assert.ok(
      platformView.some((e) => e.type === 'api_key.created'),
      "platformView.some((e) => e.type === 'api_key.created')",
    );
  });

  it('rejects bad queries with 400 invalid_request', async () => {
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=x',
      'types=nope.event',
      'after=evt_00000000000000000000000000',
      'after=bogus',
      'organization_id=x',
      'colour=blue',
    ]) {
      expectError(await api('GET', `/events?${q}`), 400, 'invalid_request');
    }
  });
});

describe('/v1/openapi.json', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('is an OpenAPI 3.1 document generated from the route schemas', async () => {
    const r = await s.request({ path: '/v1/openapi.json' });
    assert.equal(r.status, 200);
    const doc = r.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.servers, [{ url: s.tenant.tenant.issuer }]);
    for (const path of [
      '/v1/organizations',
      '/v1/organizations/{orgId}',
      '/v1/users',
      '/v1/organizations/{orgId}/members',
      '/v1/organizations/{orgId}/api_keys',
      '/v1/api_keys',
      '/v1/events',
    ]) {
      assert.ok(doc.paths[path], path);
    }
    const create = doc.paths['/v1/organizations'].post;
    assert.ok(create.requestBody.content['application/json'].schema.properties.name, "create.requestBody.content['application/json'].schema.properties.name");
    assert.ok(create.responses['201'], "create.responses['201']");
    assert.equal(doc.paths['/v1/openapi.json'], undefined);
  });
});
