import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSIONS } from '../../src/management/permissions.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { isForeignKeyViolation } from '../../src/storage/db.js';
import { onPostgres } from '../helpers/db.js';
import { expectError } from '../helpers/v1.js';
import { ConsoleClient, PASSWORD } from './helpers.js';

// A tenant administrator acts with every permission: a narrower caller may not change how one
// signs in, delete one, or keep acting after losing the role (docs/console.md).
describe('tenant administrators are protected from narrower callers', () => {
  let s: TestServer;
  let tid: string;
  const v1 = (key: string, method: string, path: string, body?: unknown) =>
    s.request({
      method,
      path,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const mint = async (permissions: readonly string[]) => {
    const r = await v1(s.tenant.platformApiKey, 'POST', '/v1/api_keys', { name: 'k', scopes: permissions });
    assert.equal(r.status, 201, r.text);
    return r.json().key as string;
  };
  const admin = async (email: string) => (await s.server.ctx.admins.grant(tid, email, PASSWORD)).user.id;

  before(async () => {
    s = await startTestServer();
    tid = s.tenant.tenant.id;
  });
  after(() => s.close());

  it('a users:write key may rename an administrator but not change the email or password: 403 insufficient_scope', async () => {
    const id = await admin('guarded@admins.test');
    const narrow = await mint(['users:read', 'users:write']);
    expectError(await v1(narrow, 'PATCH', `/v1/users/${id}`, { password: 'a new password nobody knows' }), 403, 'insufficient_scope');
    expectError(await v1(narrow, 'PATCH', `/v1/users/${id}`, { email: 'attacker@evil.test' }), 403, 'insufficient_scope');
    const renamed = await v1(narrow, 'PATCH', `/v1/users/${id}`, { name: 'Renamed' });
    assert.equal(renamed.status, 200, renamed.text);
    // The password still signs in: nothing was changed by the refused calls.
    const c = new ConsoleClient(s);
    await c.signIn('guarded@admins.test');
    assert.equal((await c.call('GET', '/console/api/session')).status, 200);
    // A key with the whole catalogue, and an ordinary user through the narrow key, are fine.
    const full = await mint(PERMISSIONS);
    assert.equal((await v1(full, 'PATCH', `/v1/users/${id}`, { password: 'another long password' })).status, 200);
    const plain = (await v1(narrow, 'POST', '/v1/users', { email: 'plain@admins.test' })).json().id as string;
    assert.equal((await v1(narrow, 'PATCH', `/v1/users/${plain}`, { password: 'plain user password' })).status, 200);
  });

  it('an administrator cannot be deleted as a user, from /v1 or the console (not even themselves): 409, the role and the user stay', async () => {
    const id = await admin('kept@admins.test');
    const other = await admin('other@admins.test');
    expectError(await v1(s.tenant.platformApiKey, 'DELETE', `/v1/users/${id}`), 409, 'conflict');
    const c = new ConsoleClient(s);
    await c.signIn('kept@admins.test');
    expectError(await c.call('DELETE', `/console/api/users/${id}`), 409, 'conflict');
    expectError(await c.call('DELETE', `/console/api/users/${other}`), 409, 'conflict');
    assert.ok((await s.server.ctx.admins.list(tid)).some((a) => a.userId === id));
    assert.equal((await v1(s.tenant.platformApiKey, 'GET', `/v1/users/${id}`)).status, 200);
    // Without the role, the user can be deleted.
    assert.equal((await c.call('DELETE', `/console/api/admins/${other}`)).status, 204);
    assert.equal((await c.call('DELETE', `/console/api/users/${other}`)).status, 204);
  });

  it('an administrator who lost the role meanwhile can neither grant nor remove (403 forbidden), checked with the rows locked', async () => {
    const a = await admin('a@race.test');
    const b = await admin('b@race.test');
    const c = await admin('c@race.test');
    // b's request was authenticated while b was an administrator; a removes b first.
    assert.equal(await s.server.ctx.admins.revoke(tid, b), true);
    const asB = { type: 'user' as const, id: b };
    await assert.rejects(s.server.ctx.admins.revokeBy(tid, asB, c), (e: { status?: number; code?: string }) => e.status === 403);
    await s.server.ctx.management.users.create(tid, { type: 'system', id: null }, { email: 'candidate@race.test' });
    await assert.rejects(s.server.ctx.admins.grantExisting(tid, asB, { email: 'candidate@race.test' }), (e: { status?: number }) => e.status === 403);
    const left = (await s.server.ctx.admins.list(tid)).map((x) => x.userId);
    assert.ok(left.includes(a) && left.includes(c) && !left.includes(b));
  });

  it('a users:write key changing a password while the account is granted the role: refused, or committed before the grant', async () => {
    const narrow = await mint(['users:read', 'users:write']);
    const granter = { type: 'user' as const, id: await admin('granter@race2.test') };
    for (let i = 0; i < 15; i++) {
      const u = await s.server.ctx.management.users.create(tid, { type: 'system', id: null }, { email: `candidate${i}@race2.test` });
      const [grant, change] = await Promise.all([
        s.server.ctx.admins.grantExisting(tid, granter, { userId: u.id }),
        v1(narrow, 'PATCH', `/v1/users/${u.id}`, { password: 'chosen by the narrow key' }),
      ]);
      assert.equal(grant.user.id, u.id);
      if (change.status === 403) {
        expectError(change, 403, 'insufficient_scope');
        continue;
      }
      assert.equal(change.status, 200, change.text);
      // It went through: then it committed before the grant, and its event comes first in the feed.
      const feed = (await v1(s.tenant.platformApiKey, 'GET', '/v1/events?types=user.updated,tenant_admin.granted&limit=100&order=desc')).json().data as Array<{
        type: string;
        data: { user_id: string };
      }>;
      const mine = feed.filter((e) => e.data.user_id === u.id).map((e) => e.type);
      assert.deepEqual(mine, ['tenant_admin.granted', 'user.updated'], `candidate${i}: the password change and the grant overlapped`);
    }
  });

  it(
    'a password change meeting a grant still in flight waits for it, then is refused (PostgreSQL)',
    { skip: !onPostgres && 'SQLite runs one writing transaction at a time' },
    async () => {
      const narrow = await mint(['users:read', 'users:write']);
      const u = await s.server.ctx.management.users.create(tid, { type: 'system', id: null }, { email: 'inflight@race3.test' });
      // A grant as ConsoleAdmins does it (the user's row locked, the role row written), held open.
      let locked!: () => void;
      let release!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const released = new Promise<void>((r) => (release = r));
      const grant = s.server.ctx.db.kysely.transaction().execute(async (trx) => {
        await trx.selectFrom('users').select('id').where('tenant_id', '=', tid).where('id', '=', u.id).forUpdate().execute();
        await trx.insertInto('tenant_admins').values({ tenant_id: tid, user_id: u.id, created_at: Date.now() }).execute();
        locked();
        await released;
      });
      await isLocked;
      const change = v1(narrow, 'PATCH', `/v1/users/${u.id}`, { password: 'chosen by the narrow key' });
      // Long enough for the change to hash its password and reach its check while the grant is open.
      await new Promise((r) => setTimeout(r, 1500));
      release();
      await grant;
      expectError(await change, 403, 'insufficient_scope');
    },
  );

  it('a grant whose user was deleted meanwhile is the 404 the database reports, not a 500', async () => {
    // The race itself cannot be timed from outside: what the database answers to it (and the
    // grant maps to 404) is checked on both dialects.
    const refused = await s.server.ctx.db.kysely
      .insertInto('tenant_admins')
      .values({ tenant_id: tid, user_id: 'user_00000000000000000000000000', created_at: 1 })
      .execute()
      .catch((err: unknown) => err);
    assert.ok(isForeignKeyViolation(refused), String(refused));
  });
});
