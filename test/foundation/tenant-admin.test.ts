import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { v1 } from '../helpers/v1.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tenant administration (keyhall tenant update/delete)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { cacheTtlMs: 300 } });
  });
  after(() => s.close());

  it('unknown_tenant names the host received and how to list tenants', async () => {
    const r = await s.request({ host: 'nobody.test:8080', path: '/.well-known/openid-configuration' });
    assert.equal(r.status, 404);
    assert.equal(r.json().error, 'unknown_tenant');
    assert.match(r.json().error_description, /nobody\.test:8080/);
    assert.match(r.json().error_description, /keyhall tenant list/);
  });

  it('a host change made on this instance is seen at once (the cache is invalidated)', async () => {
    const t = await s.createTenant('here-old.test');
    // Warm the cache on the old host.
    assert.equal((await s.request({ host: 'here-old.test', path: '/.well-known/openid-configuration' })).status, 200);
    const updated = await s.server.ctx.tenants.update(t.tenant.id, { host: 'here-new.test' });
    assert.equal(updated.issuer, 'https://here-new.test');
    assert.equal((await s.request({ host: 'here-old.test', path: '/.well-known/openid-configuration' })).json().error, 'unknown_tenant');
    const meta = await s.request({ host: 'here-new.test', path: '/.well-known/openid-configuration' });
    assert.equal(meta.json().issuer, 'https://here-new.test');
  });

  it('tenant update from the CLI: new host at once, old host gone within the cache TTL, audited', async () => {
    const t = await s.createTenant('old.acme.test');
    assert.equal((await s.request({ host: 'old.acme.test', path: '/.well-known/openid-configuration' })).status, 200);
    const r = runCli(['tenant', 'update', 'old.acme.test', '--host', 'new.acme.test', '--json'], s.env);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { tenant_id: t.tenant.id, host: 'new.acme.test', issuer: 'https://new.acme.test' });
    const meta = await s.request({ host: 'new.acme.test', path: '/.well-known/openid-configuration' });
    assert.equal(meta.json().issuer, 'https://new.acme.test');
    await sleep(400);
    assert.equal((await s.request({ host: 'old.acme.test', path: '/.well-known/openid-configuration' })).json().error, 'unknown_tenant');

    const feed = (await v1(s, t.platformApiKey, 'new.acme.test')('GET', '/events?limit=100')).json().data as Array<{
      type: string;
      actor: { type: string };
      data: Record<string, string>;
    }>;
    const ev = feed.find((e) => e.type === 'tenant.updated');
    assert.ok(ev, 'tenant.updated recorded');
    assert.equal(ev.actor.type, 'system');
    assert.deepEqual(ev.data, {
      host: 'new.acme.test',
      issuer: 'https://new.acme.test',
      previous_host: 'old.acme.test',
      previous_issuer: 'https://old.acme.test',
    });

    // --issuer alone keeps the host.
    const iss = runCli(['tenant', 'update', t.tenant.id, '--issuer', 'https://NEW.acme.test/', '--json'], s.env);
    assert.equal(iss.status, 0, iss.stderr);
    assert.equal(JSON.parse(iss.stdout).issuer, 'https://new.acme.test');
  });

  it('tenant update refuses clearly (exit 2, names the problem)', () => {
    const cases: Array<[string[], RegExp]> = [
      [['tenant', 'update', 'new.acme.test'], /--host and\/or --issuer/],
      [['tenant', 'update', '--host', 'x.test'], /usage: keyhall tenant update <id\|host>/],
      [['tenant', 'update', 'missing.test', '--host', 'x.test'], /no tenant missing\.test/],
      [['tenant', 'update', 'new.acme.test', '--host', s.tenant.tenant.host], /already serves host/],
      [['tenant', 'update', 'new.acme.test', '--issuer', 'https://other.test'], /does not match/],
      [['tenant', 'update', 'new.acme.test', '--host', 'bad host'], /invalid host/],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args, s.env);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.ok(!r.stderr.includes('    at '), 'no stack trace');
    }
  });

  it('tenant delete needs --yes, then deletes the tenant with all of its data and logs it', async () => {
    const t = await s.createTenant('doomed.test');
    const api = v1(s, t.platformApiKey, 'doomed.test');
    const org = (await api('POST', '/organizations', { name: 'Doomed' })).json().id;
    assert.equal((await api('POST', '/users', { email: 'gone@example.com' })).status, 201);
    assert.equal((await api('POST', `/organizations/${org}/api_keys`, { name: 'k', scopes: ['members:read'] })).status, 201);

    const refused = runCli(['tenant', 'delete', 'doomed.test'], s.env);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--yes/);
    assert.equal((await api('GET', '/organizations')).status, 200, 'nothing deleted without --yes');

    const r = runCli(['tenant', 'delete', 'doomed.test', '--yes'], { ...s.env, KEYHALL_LOG_LEVEL: 'info' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Deleted tenant ten_\w+ \(doomed\.test\)/);
    assert.match(r.stdout, /"event":"tenant\.deleted"/);
    await sleep(400);
    assert.equal((await api('GET', '/organizations')).json().error, 'unknown_tenant');

    const db = s.server.ctx.db.kysely;
    for (const table of ['api_keys', 'organizations', 'users', 'members', 'signing_keys', 'events'] as const) {
      const rows = await db.selectFrom(table).select('tenant_id').where('tenant_id', '=', t.tenant.id).execute();
      assert.equal(rows.length, 0, `${table} emptied`);
    }
    // Other tenants are untouched.
    assert.equal((await s.request({ path: '/.well-known/openid-configuration' })).status, 200);
    const again = runCli(['tenant', 'delete', 'doomed.test', '--yes'], s.env);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /no tenant doomed\.test/);
  });
});
