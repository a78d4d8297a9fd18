import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SigninLoginFailureRepo } from '../../src/storage/repos/signin-accounts.js';
import { SigninSessionRepo } from '../../src/storage/repos/signin-sessions.js';
import { type SigninTestServer, startSigninServer } from './helpers.js';

describe('sign-in storage primitives (SQLite and PostgreSQL)', () => {
  let s: SigninTestServer;
  let tenantId: string;
  before(async () => {
    s = await startSigninServer();
    tenantId = s.tenant.tenant.id;
  });
  after(() => s.close());

  it('counts failures in a fixed window that restarts at 1 once it has ended, and sweeps ended windows', async () => {
    const repo = new SigninLoginFailureRepo(s.server.ctx.db.kysely);
    await Promise.all([1, 2, 3, 4].map(() => repo.fail(tenantId, 'k1', 1000, 500)));
    assert.deepEqual(await repo.current(tenantId, 'k1', 1200), { count: 4, windowEndsAt: 1500 });
    assert.deepEqual(await repo.current(tenantId, 'k1', 1500), { count: 0, windowEndsAt: 1500 });
    await repo.fail(tenantId, 'k1', 1600, 500);
    assert.deepEqual(await repo.current(tenantId, 'k1', 1700), { count: 1, windowEndsAt: 2100 });
    await repo.sweep(2100);
    const left = await s.server.ctx.db.kysely.selectFrom('signin_login_failures').selectAll().where('tenant_id', '=', tenantId).execute();
    assert.equal(left.length, 0);
  });

  it('deletes only sessions that ended long enough ago', async () => {
    const user = await s.createUser('sweep@example.com');
    const repo = new SigninSessionRepo(s.server.ctx.db.kysely);
    const base = { tenantId, userId: user.id, userAgent: null, ip: null, authTime: 0, createdAt: 0, lastSeenAt: 0, revokedAt: null };
    await repo.insert({ ...base, id: 'ses_live', idleExpiresAt: 10_000, expiresAt: 20_000 }, 'h-live');
    await repo.insert({ ...base, id: 'ses_old', idleExpiresAt: 100, expiresAt: 20_000 }, 'h-old');
    await repo.sweep(5_000, 1_000);
    assert.ok(await repo.find(tenantId, 'ses_live'));
    assert.equal(await repo.find(tenantId, 'ses_old'), undefined);
    assert.deepEqual(await repo.revokeAllForUser(tenantId, user.id, 6_000), ['ses_live']);
    assert.deepEqual(await repo.revokeAllForUser(tenantId, user.id, 6_000), [], 'revoking is idempotent');
  });
});
