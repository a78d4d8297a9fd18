import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hash, parseOptions, verify } from '@node-rs/argon2';
import { repos } from '../../src/storage/repos/index.js';
import { currentPasswordSetBy, passwordTag, type UserRecord } from '../../src/storage/repos/users.js';
import { PASSWORD_HASHING, rehashFor, upgradeHash } from '../../src/users/passwords.js';
import { PASSWORD, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

/** A stored password hash with other parameters than today's is replaced at the next successful sign-in. */
describe('password re-hash on sign-in', () => {
  let s: SigninTestServer;
  before(async () => {
    s = await startSigninServer();
  });
  after(() => s.close());

  const users = () => repos(s.server.ctx.db.kysely, s.server.ctx.db.dialect).users;
  const stored = async (id: string): Promise<UserRecord> => (await users().find(s.tenant.tenant.id, id))!;

  /** A user whose hash was made with weaker parameters (an earlier release), set by an administrator. */
  async function weakUser(email: string): Promise<{ id: string; email: string; weak: string; updatedAt: number }> {
    const u = await s.createUser(email);
    const weak = await hash(PASSWORD, { memoryCost: 4096, timeCost: 1 });
    const setBy = { type: 'user' as const, id: 'user_admin', every_permission: true, hash_tag: passwordTag(weak) };
    const row = await users().update(s.tenant.tenant.id, u.id, { passwordHash: weak, passwordSetBy: setBy }, s.server.ctx.clock.now());
    return { ...u, weak, updatedAt: row!.updatedAt };
  }

  it("a wrong password changes nothing; the right one signs in and the stored hash then carries today's parameters", async () => {
    const u = await weakUser('weak@example.com');
    const b = s.browser();
    const page = await b.get('/login');
    assert.equal((await b.submit(page, { email: u.email, password: 'not the password' })).status, 401);
    assert.equal((await stored(u.id)).passwordHash, u.weak);

    assert.equal((await signIn(s.browser(), '/login', u.email)).status, 303);
    const after = await stored(u.id);
    assert.notEqual(after.passwordHash, u.weak);
    const made = parseOptions(after.passwordHash!);
    for (const k of Object.keys(PASSWORD_HASHING) as Array<keyof typeof PASSWORD_HASHING>) assert.equal(made[k], PASSWORD_HASHING[k], k);
    assert.equal(await verify(after.passwordHash!, PASSWORD), true);
    // The same password: no new updated_at, and who set it still reads as known.
    assert.equal(after.updatedAt, u.updatedAt);
    assert.deepEqual(currentPasswordSetBy(after), { type: 'user', id: 'user_admin', every_permission: true, hash_tag: passwordTag(after.passwordHash!) });

    // Signing in with the old password works with the new hash, and leaves a current hash alone.
    assert.equal((await signIn(s.browser(), '/login', u.email)).status, 303);
    assert.equal((await stored(u.id)).passwordHash, after.passwordHash);
  });

  it('does not overwrite a password changed since the hash was verified', async () => {
    const u = await weakUser('changed@example.com');
    const seen = await stored(u.id);
    const changed = await s.server.ctx.management.users.update(s.tenant.tenant.id, { type: 'system', id: null }, u.id, { password: 'a brand new password' });
    assert.equal(await upgradeHash(users(), seen, (await rehashFor(seen, PASSWORD))!), false);
    assert.equal((await stored(u.id)).passwordHash, changed.passwordHash);
    assert.equal(await verify((await stored(u.id)).passwordHash!, 'a brand new password'), true);
  });
});
