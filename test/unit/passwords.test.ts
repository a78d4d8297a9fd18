import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hash } from '@node-rs/argon2';
import { hashPassword, needsRehash, verifyPassword } from '../../src/users/passwords.js';

describe('password hashing parameters', () => {
  it('a hash made today needs no re-hash and verifies', async () => {
    const h = await hashPassword('correct horse battery staple');
    assert.match(h, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal(needsRehash(h), false);
    assert.equal(await verifyPassword(h, 'correct horse battery staple'), true);
    assert.equal(await verifyPassword(h, 'wrong'), false);
  });

  it('a hash with other parameters, another algorithm or unreadable needs a re-hash', async () => {
    assert.equal(needsRehash(await hash('pw', { memoryCost: 4096, timeCost: 1 })), true);
    assert.equal(needsRehash(await hash('pw', { timeCost: 3 })), true);
    assert.equal(needsRehash(await hash('pw', { parallelism: 2 })), true);
    assert.equal(needsRehash(await hash('pw', { algorithm: 1 as never })), true);
    assert.equal(needsRehash(await hash('pw', { outputLen: 16 })), true);
    assert.equal(needsRehash('$argon2id$garbage'), true);
  });

  it('an unreadable stored hash is a mismatch, not an error', async () => {
    assert.equal(await verifyPassword('not a hash', 'pw'), false);
  });
});
