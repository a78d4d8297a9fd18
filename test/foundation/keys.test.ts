import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT, createLocalJWKSet, jwtVerify } from 'jose';
import { ManualClock } from '../../src/kernel/clock.js';
import { Envelope } from '../../src/kernel/crypto/envelope.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Jwks = { keys: Array<{ kid: string; alg: string }> };

async function waitFor<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('signing keys and rotation', () => {
  let s: TestServer;
  const clock = new ManualClock(Date.now());
  before(async () => {
    s = await startTestServer({ clock, config: { cacheTtlMs: 100, keyOverlapSeconds: 3600 } });
  });
  after(() => s.close());

  const jwks = async (): Promise<Jwks> => (await s.request({ path: '/.well-known/jwks.json' })).json();

  it('stores private keys encrypted under the master key', async () => {
    const rows = await s.server.ctx.db.kysely.selectFrom('signing_keys').selectAll().where('tenant_id', '=', s.tenant.tenant.id).execute();
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.match(row.private_jwk_enc, /^v1\./);
      assert.ok(!row.private_jwk_enc.includes('"d"'), '!row.private_jwk_enc.includes(\'"d"\')');
      assert.throws(() => new Envelope(Buffer.alloc(32, 7)).decrypt(row.private_jwk_enc, `signing_key:${row.tenant_id}:${row.kid}`));
    }
  });

  it('signs with the active key and verifies against the published JWKS', async () => {
    const key = await s.server.ctx.keystore.activeKey(s.tenant.tenant.id, 'EdDSA');
    const jwt = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'EdDSA', kid: key.kid }).sign(key.privateKey);
    const { payload } = await jwtVerify(jwt, createLocalJWKSet(await jwks()));
    assert.equal(payload.sub, 'x');
  });

  it('keys rotate (a separate process) is served by the running server without restart', async () => {
    const before = await jwks();
    const r = runCli(['keys', 'rotate', '--tenant', s.tenant.tenant.host, '--json'], { ...s.env, KEYHALL_KEY_OVERLAP_SECONDS: '3600' });
    assert.equal(r.status, 0, r.stderr);
    const { new_kids } = JSON.parse(r.stdout) as { new_kids: string[] };
    assert.equal(new_kids.length, 2);
    const after = await waitFor(jwks, (j) => j.keys.length === 4);
    const kids = after.keys.map((k) => k.kid);
    for (const k of before.keys) assert.ok(kids.includes(k.kid), 'old key still published');
    for (const k of new_kids) assert.ok(kids.includes(k), 'new key published');
    const active = await waitFor(
      () => s.server.ctx.keystore.activeKey(s.tenant.tenant.id, 'EdDSA'),
      (k) => new_kids.includes(k.kid),
    );
    assert.ok(new_kids.includes(active.kid), 'new key signs');
  });

  it('drops a retired key from the JWKS once the overlap has passed', async () => {
    // The rotation ran in another process on the system clock, a little after this clock started.
    clock.set(Date.now() + 3600 * 1000 + 60_000);
    const j = await waitFor(jwks, (x) => x.keys.length === 2);
    assert.equal(j.keys.length, 2);
    assert.deepEqual(j.keys.map((k) => k.alg).sort(), ['EdDSA', 'RS256']);
  });

  it('refuses to rotate an unknown tenant, or an unknown alg (exit 2)', () => {
    assert.equal(runCli(['keys', 'rotate', '--tenant', 'nope.test'], s.env).status, 2);
    assert.equal(runCli(['keys', 'rotate', '--tenant', s.tenant.tenant.id, '--alg', 'HS256'], s.env).status, 2);
    assert.equal(runCli(['keys', 'rotate'], s.env).status, 2);
  });
});
