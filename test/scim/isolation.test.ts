import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createDirectory, type Directory, expectScimError, GROUP, membersOf, PATCH, USER, verifyDomain } from './helpers.js';

describe('SCIM isolation between connections', () => {
  let s: TestServer;
  let a: Directory;
  let b: Directory;
  let c: Directory;
  before(async () => {
    s = await startTestServer();
    a = await createDirectory(s);
    b = await createDirectory(s, { orgId: a.orgId, name: 'Second directory of the same organization' });
    c = await createDirectory(s);
  });
  after(() => s.close());

  it("connection A's token cannot read or write connection B's users or groups, even in the same organization", async () => {
    const bu = (await b.scim('POST', '/Users', { schemas: [USER], userName: 'only-b@acme.example' })).json();
    const bg = (await b.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'B group', members: [{ value: bu.id }] })).json();
    assert.match(bu.id, /^dsu_/);
    for (const other of [a, c]) {
      expectScimError(await other.scim('GET', `/Users/${bu.id}`), 404);
      expectScimError(await other.scim('PUT', `/Users/${bu.id}`, { schemas: [USER], userName: 'hijack@acme.example' }), 404);
      expectScimError(await other.scim('PATCH', `/Users/${bu.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }), 404);
      expectScimError(await other.scim('DELETE', `/Users/${bu.id}`), 404);
      expectScimError(await other.scim('GET', `/Groups/${bg.id}`), 404);
      expectScimError(await other.scim('PATCH', `/Groups/${bg.id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members' }] }), 404);
      expectScimError(await other.scim('DELETE', `/Groups/${bg.id}`), 404);
      assert.equal((await other.scim('GET', `/Users?filter=${encodeURIComponent('userName eq "only-b@acme.example"')}`)).json().totalResults, 0);
      assert.equal((await other.scim('GET', '/Users')).json().totalResults, 0);
      assert.equal((await other.scim('GET', `/Users?filter=${encodeURIComponent(`id eq "${bu.id}"`)}`)).json().totalResults, 0);
      assert.equal((await other.scim('GET', '/Groups')).json().totalResults, 0);
      // B's user cannot be put into A's groups either.
      expectScimError(await other.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'steal', members: [{ value: bu.id }] }), 400, 'invalidValue');
    }
    const still = await b.scim('GET', `/Users/${bu.id}`);
    assert.equal(still.json().active, true);
    assert.equal((await b.scim('GET', `/Groups/${bg.id}`)).json().members.length, 1);
    assert.equal((await membersOf(a.api, a.orgId)).length, 1);
  });

  it('the same person can be provisioned by two connections; each sees only its own record', async () => {
    // A creates the user; C links it, which needs the email in C's organization's verified domain.
    await verifyDomain(c.api, c.orgId, 'acme.example');
    const ra = await a.scim('POST', '/Users', { schemas: [USER], userName: 'shared@acme.example' });
    const rc = await c.scim('POST', '/Users', { schemas: [USER], userName: 'shared@acme.example' });
    assert.equal(ra.status, 201, ra.text);
    assert.equal(rc.status, 201, rc.text);
    assert.notEqual(ra.json().id, rc.json().id);
    const inA = (await membersOf(a.api, a.orgId)).find((m) => m.user.email === 'shared@acme.example');
    const inC = (await membersOf(c.api, c.orgId)).find((m) => m.user.email === 'shared@acme.example');
    assert.equal(inA?.user_id, inC?.user_id);
    // Deactivating in C removes the C-organization membership only.
    await c.scim('PATCH', `/Users/${rc.json().id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
    assert.ok((await membersOf(a.api, a.orgId)).some((m) => m.user.email === 'shared@acme.example'));
    assert.ok(!(await membersOf(c.api, c.orgId)).some((m) => m.user.email === 'shared@acme.example'));
  });

  it("deleting the organization ends its connections: the token fails and the directory's records go", async () => {
    const d = await createDirectory(s);
    const u = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'gone@acme.example' })).json();
    await d.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Gone', members: [{ value: u.id }] });
    assert.equal((await d.api('DELETE', `/organizations/${d.orgId}`)).status, 204);
    expectScimError(await d.scim('GET', '/Users'), 401);
  });

  it('a revoked token fails on the very next request', async () => {
    const d = await createDirectory(s);
    const u = (await d.scim('POST', '/Users', { schemas: [USER], userName: 'rev@acme.example' })).json();
    await d.api('POST', `/organizations/${d.orgId}/directory/scim_token`, { connection_id: d.connectionId });
    expectScimError(await d.scim('GET', `/Users/${u.id}`), 401);
    expectScimError(await d.scim('DELETE', `/Users/${u.id}`), 401);
    await d.api('DELETE', `/organizations/${d.orgId}/directory/connections/${d.connectionId}`);
    assert.ok(
      (await membersOf(d.api, d.orgId)).some((m) => m.user.email === 'rev@acme.example'),
      'deleting a connection deprovisions nobody',
    );
  });
});
