import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, v1 } from '../helpers/v1.js';
import { createDirectory, type Directory, GROUP, USER } from './helpers.js';

interface DirUser {
  id: string;
  user_id: string;
  external_id: string | null;
  user_name: string;
  display_name: string | null;
  email: string | null;
  emails: Array<{ value: string; type: string | null; primary: boolean }>;
  active: boolean;
}
interface DirGroup {
  id: string;
  external_id: string | null;
  display_name: string;
  member_count: number;
}

// GET /v1/organizations/{orgId}/directory/connections/{id}/users and …/groups: what SCIM
// provisioned through one connection (docs/scim.md).
describe('/v1 directory users and groups', () => {
  let s: TestServer;
  let d: Directory;
  let other: Directory;
  // Ids sort by creation time: each resource is made a second after the previous one.
  const clock = new ManualClock(Date.parse('2026-05-01T00:00:00Z'));
  const base = () => `/organizations/${d.orgId}/directory/connections/${d.connectionId}`;

  async function provisionUser(dir: Directory, userName: string, extra: Record<string, unknown> = {}): Promise<string> {
    clock.advance(1000);
    const r = await dir.scim('POST', '/Users', { schemas: [USER], userName, ...extra });
    assert.equal(r.status, 201, r.text);
    return r.json().id;
  }

  before(async () => {
    s = await startTestServer({ clock });
    d = await createDirectory(s);
    other = await createDirectory(s);
  });
  after(() => s.close());

  it('lists the users the connection provisioned, oldest first, with external id, emails and active', async () => {
    const ada = await provisionUser(d, 'ada@corp.example', {
      externalId: 'ext-ada',
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      displayName: 'Ada Lovelace',
      emails: [
        { value: 'Ada@corp.example', type: 'work', primary: true },
        { value: 'ada@home.example', type: 'home' },
      ],
    });
    const bob = await provisionUser(d, 'bob@corp.example', { active: false });
    await provisionUser(other, 'eve@corp.example');

    const r = await d.api('GET', `${base()}/users`);
    assert.equal(r.status, 200, r.text);
    const body = r.json() as { data: DirUser[]; has_more: boolean; next_cursor: string | null };
    assert.deepEqual(
      body.data.map((u) => u.id),
      [ada, bob],
    );
    assert.equal(body.has_more, false);
    const [a, b] = body.data;
    assert.equal(a!.external_id, 'ext-ada');
    assert.equal(a!.user_name, 'ada@corp.example');
    assert.equal(a!.display_name, 'Ada Lovelace');
    assert.equal(a!.email, 'ada@corp.example');
    assert.deepEqual(a!.emails, [
      { value: 'Ada@corp.example', type: 'work', primary: true },
      { value: 'ada@home.example', type: 'home', primary: false },
    ]);
    assert.equal(a!.active, true);
    assert.match(a!.user_id, /^user_/);
    assert.equal(b!.active, false);
    assert.equal(b!.external_id, null);
    assert.ok(!r.text.includes('password'));
  });

  it('lists the groups with display names and member counts', async () => {
    const dir = await createDirectory(s);
    const u1 = await provisionUser(dir, 'u1@corp.example');
    const u2 = await provisionUser(dir, 'u2@corp.example');
    clock.advance(1000);
    const eng = await dir.scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'Engineering',
      externalId: 'g-eng',
      members: [{ value: u1 }, { value: u2 }],
    });
    assert.equal(eng.status, 201, eng.text);
    clock.advance(1000);
    const empty = await dir.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Empty' });
    assert.equal(empty.status, 201, empty.text);

    const r = await dir.api('GET', `/organizations/${dir.orgId}/directory/connections/${dir.connectionId}/groups`);
    assert.equal(r.status, 200, r.text);
    const groups = r.json().data as DirGroup[];
    assert.deepEqual(
      groups.map((g) => [g.id, g.display_name, g.external_id, g.member_count]),
      [
        [eng.json().id, 'Engineering', 'g-eng', 2],
        [empty.json().id, 'Empty', null, 0],
      ],
    );
    // The other connection's groups are not this one's.
    const none = await d.api('GET', `${base()}/groups`);
    assert.deepEqual(none.json().data, []);
  });

  it('pages users and groups with limit and after', async () => {
    const dir = await createDirectory(s);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await provisionUser(dir, `p${i}@corp.example`));
    for (let i = 0; i < 3; i++) assert.equal((await dir.scim('POST', '/Groups', { schemas: [GROUP], displayName: `G${i}` })).status, 201);
    const path = `/organizations/${dir.orgId}/directory/connections/${dir.connectionId}`;
    const seen: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const r = await dir.api('GET', `${path}/users?limit=2${cursor ? `&after=${cursor}` : ''}`);
      assert.equal(r.status, 200, r.text);
      seen.push(...r.json().data.map((u: DirUser) => u.id));
      if (!r.json().has_more) break;
      cursor = r.json().next_cursor;
    }
    assert.deepEqual(seen, ids);
    const g1 = (await dir.api('GET', `${path}/groups?limit=2`)).json();
    assert.equal(g1.data.length, 2);
    assert.equal(g1.has_more, true);
    const g2 = (await dir.api('GET', `${path}/groups?limit=2&after=${g1.next_cursor}`)).json();
    assert.equal(g2.data.length, 1);
    assert.equal(g2.has_more, false);
    // A users cursor is not a groups cursor.
    const u1 = (await dir.api('GET', `${path}/users?limit=1`)).json();
    expectError(await dir.api('GET', `${path}/groups?after=${u1.next_cursor}`), 400, 'invalid_request');
  });

  it('bad paging input is 400 invalid_request', async () => {
    for (const list of ['users', 'groups']) {
      expectError(await d.api('GET', `${base()}/${list}?limit=0`), 400, 'invalid_request');
      expectError(await d.api('GET', `${base()}/${list}?limit=abc`), 400, 'invalid_request');
      expectError(await d.api('GET', `${base()}/${list}?after=%25%25`), 400, 'invalid_request');
      expectError(await d.api('GET', `${base()}/${list}?filter=x`), 400, 'invalid_request');
    }
  });

  it("an unknown connection, another organization's connection or a malformed id is 404 not_found", async () => {
    for (const list of ['users', 'groups']) {
      expectError(await d.api('GET', `/organizations/${d.orgId}/directory/connections/dir_0000000000000000000000000/${list}`), 404, 'not_found');
      expectError(await d.api('GET', `/organizations/${d.orgId}/directory/connections/${other.connectionId}/${list}`), 404, 'not_found');
      expectError(await d.api('GET', `/organizations/${d.orgId}/directory/connections/nope/${list}`), 404, 'not_found');
      expectError(await d.api('GET', `/organizations/org_0000000000000000000000000/directory/connections/${d.connectionId}/${list}`), 404, 'not_found');
    }
  });

  it("needs directory:read on the platform or the connection's organization; other tenants see nothing", async () => {
    const own = await d.api('POST', `/organizations/${d.orgId}/api_keys`, { name: 'dir', scopes: ['directory:read'] });
    assert.equal(own.status, 201, own.text);
    const reader = v1(s, own.json().key);
    for (const path of [base(), `${base()}/users`, `${base()}/groups`, `/organizations/${d.orgId}/directory/connections`]) {
      assert.equal((await reader('GET', path)).status, 200, path);
    }
    // Reading is all it does: no change, no new connection, no SCIM token.
    expectError(await reader('PATCH', base(), { name: 'renamed' }), 403, 'insufficient_scope');
    expectError(await reader('POST', `/organizations/${d.orgId}/directory/connections`, { name: 'another' }), 403, 'insufficient_scope');
    expectError(await reader('POST', `/organizations/${d.orgId}/directory/scim_token`, { connection_id: d.connectionId }), 403, 'insufficient_scope');
    expectError(await reader('DELETE', base()), 403, 'insufficient_scope');
    // And writing is not reading: a key minted with directory:write only is refused the lists.
    const writer = await d.api('POST', `/organizations/${d.orgId}/api_keys`, { name: 'w', scopes: ['directory:write'] });
    expectError(await v1(s, writer.json().key)('GET', `${base()}/users`), 403, 'insufficient_scope');
    const noScope = await d.api('POST', `/organizations/${d.orgId}/api_keys`, { name: 'm', scopes: ['members:read'] });
    expectError(await v1(s, noScope.json().key)('GET', `${base()}/groups`), 403, 'insufficient_scope');
    const elsewhere = await d.api('POST', `/organizations/${other.orgId}/api_keys`, { name: 'x', scopes: ['directory:read'] });
    expectError(await v1(s, elsewhere.json().key)('GET', `${base()}/users`), 403, 'forbidden');
    const t2 = await s.createTenant(`t2.test:${s.port}`);
    expectError(await v1(s, t2.platformApiKey, t2.tenant.host)('GET', `${base()}/users`), 404, 'not_found');
  });
});
