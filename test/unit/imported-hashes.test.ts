import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { hash as argon2 } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';
import { firebaseStored, hashFormat, keycloakStored, normalizeImportedHash, verifyStoredHash } from '../../src/users/imported-hashes.js';
import { needsRehash, verifyPassword } from '../../src/users/passwords.js';

// Each format's vector comes from its reference implementation or its documentation.
const FIREBASE = {
  signerKey: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  saltSeparator: 'Bw==',
  rounds: 8,
  memCost: 14,
};

describe('imported password hashes', () => {
  it("Firebase's modified scrypt: the documented test vector of github.com/firebase/scrypt", async () => {
    const stored = firebaseStored('lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==', '42xEC+ixf3L2lw==', FIREBASE);
    assert.equal(hashFormat(stored), 'firebase-scrypt');
    assert.equal(await verifyStoredHash(stored, 'user1password'), true);
    assert.equal(await verifyStoredHash(stored, 'user1passwore'), false);
    // Another project's signer key: no match.
    assert.equal(
      await verifyStoredHash(
        firebaseStored('lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==', '42xEC+ixf3L2lw==', {
          ...FIREBASE,
          signerKey: 'AAAA',
        }),
        'user1password',
      ),
      false,
    );
  });

  it("Django's pbkdf2_sha256 (the known hash of Django's own tests) is converted and verifies", async () => {
    const n = normalizeImportedHash('pbkdf2_sha256$1000000$seasalt$r1uLUxoxpP2Ued/qxvmje7UH9PUJBkRrvf9gGPL7Cps=', { allowLegacy: false });
    assert.ok(n.ok);
    assert.equal(n.format, 'pbkdf2-sha256');
    assert.equal(await verifyStoredHash(n.stored, 'lètmein'), true);
    assert.equal(await verifyStoredHash(n.stored, 'letmein'), false);
  });

  it('scrypt in PHC form: the RFC 7914 §12 test vector', async () => {
    const dk = Buffer.from(
      'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
      'hex',
    );
    const stored = `$scrypt$ln=10,r=8,p=16$${Buffer.from('NaCl').toString('base64')}$${dk.toString('base64')}`;
    assert.equal(await verifyStoredHash(stored, 'password'), true);
    assert.equal(await verifyStoredHash(stored, 'Password'), false);
  });

  it('bcrypt $2a$, $2b$, $2y$ made by bcryptjs', async () => {
    const h = bcrypt.hashSync('correct horse', 4);
    for (const v of ['$2a$', '$2b$', '$2y$']) {
      const stored = h.replace(/^\$2b\$/, v);
      assert.equal(hashFormat(stored), 'bcrypt');
      assert.equal(await verifyPassword(stored, 'correct horse'), true, v);
      assert.equal(await verifyPassword(stored, 'correct horsE'), false, v);
    }
    // A cost past the bound is not read (a sign-in attempt stays cheap).
    assert.equal(normalizeImportedHash(h.replace('$04$', '$20$'), { allowLegacy: false }).ok, false);
  });

  it('argon2i and argon2id PHC strings made by @node-rs/argon2', async () => {
    const i = await argon2('pw argon2i', { algorithm: 1 as never });
    assert.equal(hashFormat(i), 'argon2i');
    assert.equal(await verifyPassword(i, 'pw argon2i'), true);
    assert.equal(await verifyPassword(i, 'pw argon2'), false);
    assert.equal(needsRehash(i), true);
    const id = await argon2('pw argon2id');
    assert.equal(normalizeImportedHash(id, { allowLegacy: false }).ok, true);
  });

  it("Keycloak's PBKDF2 credentials (sha1, sha256, sha512)", async () => {
    const { pbkdf2Sync } = await import('node:crypto');
    for (const [algorithm, digest] of [
      ['pbkdf2', 'sha1'],
      ['pbkdf2-sha256', 'sha256'],
      ['pbkdf2-sha512', 'sha512'],
    ] as const) {
      const salt = Buffer.from('0123456789abcdef');
      const value = pbkdf2Sync('kc password', salt, 1000, 64, digest).toString('base64');
      const stored = keycloakStored(value, salt.toString('base64'), 1000, algorithm)!;
      assert.equal(hashFormat(stored), `pbkdf2-${digest}`);
      assert.equal(await verifyStoredHash(stored, 'kc password'), true, algorithm);
      assert.equal(await verifyStoredHash(stored, 'kc passworD'), false, algorithm);
    }
    assert.equal(keycloakStored('AAAA', 'AAAA', 1, 'argon2'), undefined);
  });

  it('salted SHA-256/512 only behind the legacy flag', async () => {
    const salt = Buffer.from('pepper');
    const digest = createHash('sha256').update(salt).update('old password').digest('base64');
    const input = `$salted-sha256$pos=prefix$${salt.toString('base64')}$${digest}`;
    assert.deepEqual(normalizeImportedHash(input, { allowLegacy: false }), { ok: false, reason: 'legacy_hash_not_allowed' });
    const n = normalizeImportedHash(input, { allowLegacy: true });
    assert.ok(n.ok);
    assert.equal(await verifyStoredHash(n.stored, 'old password'), true);
    assert.equal(await verifyStoredHash(n.stored, 'old passwore'), false);
    const suffix = createHash('sha512').update('old password').update(salt).digest('base64');
    assert.equal(await verifyStoredHash(`$salted-sha512$pos=suffix$${salt.toString('base64')}$${suffix}`, 'old password'), true);
  });

  it('refuses what it cannot read: unknown formats, plain MD5, excessive costs', () => {
    for (const h of [
      '5f4dcc3b5aa765d61d8327deb882cf99',
      '$1$abc$def',
      'plaintext',
      '$pbkdf2-sha256$i=99999999$AAAA$AAAAAAAAAAAAAAAAAAAAAA',
      '$scrypt$ln=25,r=8,p=1$AAAA$AAAAAAAAAAAAAAAAAAAAAA',
    ])
      assert.deepEqual(normalizeImportedHash(h, { allowLegacy: true }), { ok: false, reason: 'unknown_hash_format' }, h);
  });
});
