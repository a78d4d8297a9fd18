import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Envelope, EnvelopeError } from '../../src/kernel/crypto/envelope.js';
import { safeEqual, sha256Hex } from '../../src/kernel/crypto/hash.js';
import { loadMasterKey, MasterKeyError } from '../../src/kernel/crypto/master-key.js';

describe('envelope encryption', () => {
  const envelope = new Envelope(randomBytes(32));

  it('round-trips and never holds the plaintext', () => {
    const sealed = envelope.encrypt('top secret', 'ctx:1');
    assert.match(sealed, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes('top secret'), "!sealed.includes('top secret')");
    assert.equal(envelope.decrypt(sealed, 'ctx:1'), 'top secret');
  });

  it('uses a fresh data key and IV each time', () => {
    assert.notEqual(envelope.encrypt('x', 'c'), envelope.encrypt('x', 'c'));
  });

  it('refuses another context (a ciphertext moved to another row)', () => {
    const sealed = envelope.encrypt('top secret', 'ctx:1');
    assert.throws(() => envelope.decrypt(sealed, 'ctx:2'), EnvelopeError);
  });

  it('refuses tampered data and another master key', () => {
    const sealed = envelope.encrypt('top secret', 'c');
    const [v, wrapped, body] = sealed.split('.') as [string, string, string];
    const raw = Buffer.from(body, 'base64url');
    raw[14] = (raw[14] ?? 0) ^ 1;
    assert.throws(() => envelope.decrypt(`${v}.${wrapped}.${raw.toString('base64url')}`, 'c'), EnvelopeError);
    assert.throws(() => new Envelope(randomBytes(32)).decrypt(sealed, 'c'), EnvelopeError);
    assert.throws(() => envelope.decrypt('v2.a.b', 'c'), EnvelopeError);
    assert.throws(() => envelope.decrypt('garbage', 'c'), EnvelopeError);
  });

  it('needs a 32-byte master key', () => {
    assert.throws(() => new Envelope(randomBytes(16)), EnvelopeError);
  });
});

describe('hashing and comparison', () => {
  it('hashes with SHA-256 hex', () => {
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
  it('compares in constant time, whatever the lengths', () => {
    assert.equal(safeEqual('sk_live_abc', 'sk_live_abc'), true);
    assert.equal(safeEqual('sk_live_abc', 'sk_live_abd'), false);
    assert.equal(safeEqual('short', 'much longer value'), false);
    assert.equal(safeEqual('', ''), true);
  });
});

describe('master key', () => {
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-mk-'));

  it('creates a 0600 key file on first start and reuses it', () => {
    const dir = tmp();
    const first = loadMasterKey({ dataDir: dir, allowKeyFile: true });
    const mode = fs.statSync(path.join(dir, 'master.key')).mode & 0o777;
    assert.equal(mode, 0o600);
    assert.equal(first.length, 32);
    assert.deepEqual(loadMasterKey({ dataDir: dir, allowKeyFile: true }), first);
  });

  it('refuses a key file other users can read', () => {
    const dir = tmp();
    loadMasterKey({ dataDir: dir, allowKeyFile: true });
    fs.chmodSync(path.join(dir, 'master.key'), 0o644);
    assert.throws(() => loadMasterKey({ dataDir: dir, allowKeyFile: true }), /readable by other users/);
  });

  it('takes KEYHALL_MASTER_KEY and checks its size and encoding', () => {
    const key = randomBytes(32);
    assert.deepEqual(loadMasterKey({ env: key.toString('base64'), dataDir: tmp(), allowKeyFile: false }), key);
    assert.throws(() => loadMasterKey({ env: randomBytes(16).toString('base64'), dataDir: tmp(), allowKeyFile: false }), MasterKeyError);
    assert.throws(() => loadMasterKey({ env: 'not base64 !', dataDir: tmp(), allowKeyFile: false }), MasterKeyError);
  });

  it('requires KEYHALL_MASTER_KEY when a key file is not allowed (PostgreSQL)', () => {
    assert.throws(() => loadMasterKey({ dataDir: tmp(), allowKeyFile: false }), /KEYHALL_MASTER_KEY is required/);
  });
});

describe('embedded database file', () => {
  it('is readable by its owner only', async () => {
    const { openDatabase } = await import('../../src/storage/db.js');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-db-'));
    const db = openDatabase({ dataDir: dir });
    await db.close();
    assert.equal(fs.statSync(path.join(dir, 'keyhall.db')).mode & 0o777, 0o600);
  });
});
