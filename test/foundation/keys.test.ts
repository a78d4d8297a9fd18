import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT, createLocalJWKSet, jwtVerify } from 'jose';
import { ManualClock } from '../../src/kernel/clock.js';
import { Envelope } from '../../src/kernel/crypto/envelope.js';
import { Keystore } from '../../src/kernel/crypto/keystore.js';
import { repos } from '../../src/storage/repos/index.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

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

  it('creates a tenant with its EdDSA key only and makes its RS256 key at the first JWKS read', async () => {
    const other = await s.createTenant('lazy-keys.test');
    const stored = () =>
      s.server.ctx.db.kysely.selectFrom('signing_keys').select(['alg', 'status']).where('tenant_id', '=', other.tenant.id).orderBy('alg').execute();
    assert.deepEqual(await stored(), [{ alg: 'EdDSA', status: 'active' }]);
    const first: Jwks = (await s.request({ path: '/.well-known/jwks.json', host: 'lazy-keys.test' })).json();
    assert.deepEqual(first.keys.map((k) => k.alg).sort(), ['EdDSA', 'RS256']);
    assert.deepEqual(await stored(), [
      { alg: 'EdDSA', status: 'active' },
      { alg: 'RS256', status: 'active' },
    ]);
    const again: Jwks = (await s.request({ path: '/.well-known/jwks.json', host: 'lazy-keys.test' })).json();
    assert.deepEqual(again.keys.map((k) => k.kid).sort(), first.keys.map((k) => k.kid).sort(), 'made once');
  });

  it("instances racing to make a tenant's RS256 key store one, and all sign with it", async () => {
    const other = await s.createTenant('lazy-race.test');
    // Three keystores over the same database: three instances meeting the tenant's first ID token.
    const instances = [1, 2, 3].map(
      () => new Keystore(repos(s.server.ctx.db.kysely, s.server.ctx.db.dialect).signingKeys, s.server.ctx.envelope, clock, 60_000),
    );
    const keys = await Promise.all(instances.map((k) => k.activeKey(other.tenant.id, 'RS256')));
    const active = await s.server.ctx.db.kysely
      .selectFrom('signing_keys')
      .select('kid')
      .where('tenant_id', '=', other.tenant.id)
      .where('alg', '=', 'RS256')
      .execute();
    assert.equal(active.length, 1, 'one RS256 key stored');
    assert.deepEqual(
      keys.map((k) => k.kid),
      [active[0]!.kid, active[0]!.kid, active[0]!.kid],
    );
    // An ID-token signature by one instance verifies against another instance's JWKS.
    const jwt = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'RS256', kid: keys[0]!.kid }).sign(keys[0]!.privateKey);
    assert.equal((await jwtVerify(jwt, createLocalJWKSet(await instances[2]!.jwks(other.tenant.id)))).payload.sub, 'x');
  });

  it('stores private keys encrypted under the master key', async () => {
    await jwks(); // the RS256 key is made at the first read
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

interface RotatedEvent {
  id: string;
  type: string;
  organization_id: string | null;
  actor: { type: string; id: string | null };
  data: { kid: string; alg: string; retired_kid: string | null };
}

describe('key rotation is audited (signing_key.rotated)', () => {
  let s: TestServer;
  let api: Api;
  before(async () => {
    s = await startTestServer({ config: { cacheTtlMs: 100, keyOverlapSeconds: 3600 } });
    api = v1(s, s.tenant.platformApiKey);
    // The tenant's RS256 key is made at its first use (the JWKS): these tests rotate both.
    await s.request({ path: '/.well-known/jwks.json' });
  });
  after(() => s.close());

  const jwks = async (): Promise<Jwks> => (await s.request({ path: '/.well-known/jwks.json' })).json();
  /** The active key of an algorithm, as stored (the JWKS also lists retired keys during their overlap). */
  const activeKid = async (alg: string, tenantId = s.tenant.tenant.id) => {
    const rows = await s.server.ctx.db.kysely
      .selectFrom('signing_keys')
      .select('kid')
      .where('tenant_id', '=', tenantId)
      .where('alg', '=', alg)
      .where('status', '=', 'active')
      .execute();
    assert.equal(rows.length, 1, `one active ${alg} key`);
    return rows[0]!.kid;
  };
  /** Waits until the running server (its key cache) signs with `kid`, and checks the JWKS publishes it. */
  const servedAndSigning = async (alg: 'EdDSA' | 'RS256', kid: string) => {
    const j = await waitFor(jwks, (x) => x.keys.some((k) => k.kid === kid));
    assert.equal(j.keys.find((k) => k.kid === kid)?.alg, alg, 'the JWKS publishes the new key');
    const signing = await waitFor(
      () => s.server.ctx.keystore.activeKey(s.tenant.tenant.id, alg),
      (k) => k.kid === kid,
    );
    assert.equal(signing.kid, kid, 'the server signs with the key the event names');
    return j;
  };
  const rotatedEvents = async (a: Api = api): Promise<RotatedEvent[]> => {
    const r = await a('GET', '/events?types=signing_key.rotated&limit=100');
    assert.equal(r.status, 200, r.text);
    return r.json().data;
  };
  const rotate = (args: string[]) => {
    const r = runCli(['keys', 'rotate', '--tenant', s.tenant.tenant.host, '--json', ...args], s.env);
    assert.equal(r.status, 0, r.stderr);
    return (JSON.parse(r.stdout) as { new_kids: string[] }).new_kids;
  };

  it('records nothing for the keys a tenant is created with', async () => {
    assert.deepEqual(await rotatedEvents(), []);
  });

  for (const alg of ['EdDSA', 'RS256'] as const) {
    it(`keys rotate --alg ${alg} (a separate process) records the new kid, the alg and the retired kid`, async () => {
      const previous = await activeKid(alg);
      const other = alg === 'EdDSA' ? 'RS256' : 'EdDSA';
      const otherBefore = await activeKid(other);
      const seen = new Set((await rotatedEvents()).map((e) => e.id));
      const [kid] = rotate(['--alg', alg]);

      const fresh = (await rotatedEvents()).filter((e) => !seen.has(e.id));
      assert.equal(fresh.length, 1, JSON.stringify(fresh));
      const [event] = fresh;
      assert.equal(event!.type, 'signing_key.rotated');
      assert.deepEqual(event!.data, { kid, alg, retired_kid: previous });
      assert.notEqual(kid, previous);
      assert.equal(event!.organization_id, null);
      assert.deepEqual(event!.actor, { type: 'system', id: null });

      // The event's kid is the active key, published in the JWKS; the retired one stays published.
      assert.equal(await activeKid(alg), kid);
      const j = await servedAndSigning(alg, kid!);
      assert.ok(
        j.keys.some((k) => k.kid === previous),
        'the retired key is still published',
      );
      assert.equal(await activeKid(other), otherBefore, 'the other algorithm was not rotated');
    });
  }

  it('keys rotate without --alg records one event per algorithm, each naming its own predecessor', async () => {
    const previous = { EdDSA: await activeKid('EdDSA'), RS256: await activeKid('RS256') };
    const seen = new Set((await rotatedEvents()).map((e) => e.id));
    const kids = rotate([]);
    const fresh = (await rotatedEvents()).filter((e) => !seen.has(e.id));
    assert.deepEqual(
      fresh.map((e) => e.data),
      [
        { kid: kids[0], alg: 'EdDSA', retired_kid: previous.EdDSA },
        { kid: kids[1], alg: 'RS256', retired_kid: previous.RS256 },
      ],
    );
    assert.equal(await activeKid('EdDSA'), kids[0]);
    assert.equal(await activeKid('RS256'), kids[1]);
    await servedAndSigning('EdDSA', kids[0]!);
    await servedAndSigning('RS256', kids[1]!);
  });

  it('concurrent rotations each record the key they actually retired (an unbroken chain)', async () => {
    const tenant = s.tenant.tenant.id;
    const start = await activeKid('EdDSA');
    const seen = new Set((await rotatedEvents()).map((e) => e.id));
    const kids = (await Promise.all([1, 2, 3, 4].map(() => s.server.ctx.tenants.rotateKeys(tenant, ['EdDSA'])))).flat();
    const chain = (await rotatedEvents()).filter((e) => !seen.has(e.id)).map((e) => e.data);
    assert.equal(chain.length, 4);
    assert.deepEqual(new Set(chain.map((e) => e.kid)), new Set(kids));
    assert.equal(chain[0]!.retired_kid, start);
    for (let i = 1; i < chain.length; i++) assert.equal(chain[i]!.retired_kid, chain[i - 1]!.kid, `link ${i}`);
    // The last event names the key left active.
    assert.equal(await activeKid('EdDSA'), chain.at(-1)!.kid);
    await servedAndSigning('EdDSA', chain.at(-1)!.kid);
  });

  it('retired_kid is null when the algorithm had no active key', async () => {
    const other = await s.createTenant('rotated.test');
    // A tenant left without an active RS256 key (no supported path does this; staged in the database).
    await s.server.ctx.db.kysely
      .updateTable('signing_keys')
      .set({ status: 'retired', retired_at: Date.now(), expires_at: Date.now() })
      .where('tenant_id', '=', other.tenant.id)
      .where('alg', '=', 'RS256')
      .execute();
    const r = runCli(['keys', 'rotate', '--tenant', other.tenant.id, '--alg', 'RS256', '--json'], s.env);
    assert.equal(r.status, 0, r.stderr);
    const [kid] = (JSON.parse(r.stdout) as { new_kids: string[] }).new_kids;
    const events = await rotatedEvents(v1(s, other.platformApiKey, 'rotated.test'));
    assert.deepEqual(
      events.map((e) => e.data),
      [{ kid, alg: 'RS256', retired_kid: null }],
    );
    assert.equal(await activeKid('RS256', other.tenant.id), kid);
    // The main tenant's feed does not show the other tenant's rotation.
    assert.ok(!(await rotatedEvents()).some((e) => e.data.kid === kid), 'the event belongs to the rotated tenant only');
  });

  it('a refused rotation records nothing', async () => {
    const before = (await rotatedEvents()).length;
    assert.equal(runCli(['keys', 'rotate', '--tenant', s.tenant.tenant.id, '--alg', 'HS256'], s.env).status, 2);
    assert.equal((await rotatedEvents()).length, before);
  });

  it('is an audit-only type: webhook endpoints cannot subscribe to it (organization_id is null)', async () => {
    const org = (await api('POST', '/organizations', { name: 'hooks' })).json().id;
    const r = await api('POST', `/organizations/${org}/webhooks`, { url: 'https://example.com/hook', events: ['signing_key.rotated'] });
    expectError(r, 400, 'invalid_request');
    assert.match(r.json().error_description, /signing_key\.rotated/);
  });
});
