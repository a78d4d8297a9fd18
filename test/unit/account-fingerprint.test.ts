import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hash } from '@node-rs/argon2';
import { accountFingerprint } from '../../src/console/service.js';
import { passwordTag, type UserRecord } from '../../src/storage/repos/users.js';
import { hashPassword } from '../../src/users/passwords.js';

const user = (passwordHash: string | null, setBy: { type: 'api_key' | 'user'; id: string; every: boolean } | null): UserRecord => ({
  id: 'user_1',
  tenantId: 'ten_1',
  email: 'a@example.test',
  name: null,
  emailVerified: false,
  passwordHash,
  passwordSetBy: setBy && passwordHash ? { type: setBy.type, id: setBy.id, every_permission: setBy.every, hash_tag: passwordTag(passwordHash) } : null,
  createdAt: 1,
  updatedAt: 1,
});

// The console's grant of an existing user compares the fingerprint its look-up showed (issue 28 follow-up).
describe('accountFingerprint', () => {
  it('stays when a sign-in re-hashes the same password with today’s parameters', async () => {
    const old = await hash('pw', { memoryCost: 4096, timeCost: 1 });
    const rehashed = await hashPassword('pw');
    const setBy = { type: 'api_key' as const, id: 'key_1', every: true };
    assert.equal(accountFingerprint(user(old, setBy)), accountFingerprint(user(rehashed, setBy)));
  });

  it('changes when another actor sets the password, when a password appears, or the email changes', async () => {
    const h = await hashPassword('pw');
    const shown = accountFingerprint(user(h, { type: 'api_key', id: 'key_1', every: true }));
    assert.notEqual(accountFingerprint(user(h, { type: 'api_key', id: 'key_2', every: false })), shown);
    assert.notEqual(accountFingerprint(user(h, { type: 'api_key', id: 'key_1', every: false })), shown);
    assert.notEqual(accountFingerprint(user(null, null)), accountFingerprint(user(h, null)));
    assert.notEqual(accountFingerprint({ ...user(h, { type: 'api_key', id: 'key_1', every: true }), email: 'b@example.test' }), shown);
  });
});
