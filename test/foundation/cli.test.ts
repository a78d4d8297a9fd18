import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';

describe('keyhall CLI', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await freshInstallation());
  });
  after(() => cleanup());

  it('migrate brings the schema up to date, twice without harm', () => {
    const first = runCli(['migrate'], env);
    assert.equal(first.status, 0, first.stderr);
    const second = runCli(['migrate'], env);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /up to date/);
  });

  it('tenant create --json prints the tenant and a platform API key once', () => {
    const r = runCli(['tenant', 'create', '--host', 'Auth.Acme.test', '--json'], env);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out).sort(), ['console_setup_link', 'host', 'issuer', 'platform_api_key', 'tenant_id']);
    assert.match(out.tenant_id, /^ten_/);
    assert.equal(out.host, 'auth.acme.test');
    assert.equal(out.issuer, 'https://auth.acme.test');
    assert.match(out.platform_api_key, /^sk_live_[A-Za-z0-9_-]{43}$/);
  });

  it('tenant create takes an explicit issuer', () => {
    const r = runCli(['tenant', 'create', '--host', 'localhost:4100', '--issuer', 'http://localhost:4100', '--json'], env);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).issuer, 'http://localhost:4100');
  });

  it('tenant list shows the tenants, never their keys', () => {
    const r = runCli(['tenant', 'list', '--json'], env);
    assert.equal(r.status, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as Array<{ host: string }>;
    assert.deepEqual(rows.map((t) => t.host).sort(), ['auth.acme.test', 'localhost:4100']);
    assert.ok(!r.stdout.includes('sk_live_'), "!r.stdout.includes('sk_live_')");
  });

  it('exits 2 with a clear message for bad arguments', () => {
    const cases: Array<[string[], RegExp]> = [
      [['tenant', 'create', '--host', 'auth.acme.test'], /already serves host auth\.acme\.test/],
      [['tenant', 'create', '--host', 'AUTH.ACME.TEST.:443'], /already serves host/],
      [['tenant', 'create', '--host', 'b.test', '--issuer', 'not a url'], /invalid issuer URL/],
      [['tenant', 'create', '--host', 'b.test', '--issuer', 'http://b.test'], /https/],
      [['tenant', 'create', '--host', 'b.test', '--issuer', 'https://c.test'], /does not match/],
      [['tenant', 'create', '--host', 'bad host'], /invalid host/],
      [['tenant', 'create'], /--host/],
      [['tenant', 'create', '--host', 'x.test', '--bogus'], /bogus/],
      [['tenant', 'frobnicate'], /usage/],
      [['frobnicate'], /unknown command/],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args, env);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.ok(!r.stderr.includes('    at '), 'no stack trace');
    }
  });

  it('with no command prints the usage and exits 2; help and --help exit 0', () => {
    const bare = runCli([], env);
    assert.equal(bare.status, 2);
    assert.match(bare.stderr, /Usage: keyhall <command>/);
    for (const args of [['help'], ['--help'], ['-h']]) {
      const r = runCli(args, env);
      assert.equal(r.status, 0, args.join(' '));
      assert.match(r.stdout, /Usage: keyhall <command>/);
      for (const command of ['api-keys create', 'tenant update', 'tenant delete']) assert.ok(r.stdout.includes(command), command);
    }
  });

  it('a busy port is one line and exit 1, no stack trace', async () => {
    const net = await import('node:net');
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = runCli(['serve', '--port', String(port)], { ...env, KEYHALL_LOG_LEVEL: 'info' });
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.stderr.trim(), `keyhall: port ${port} is in use; use --port`);
      assert.ok(!r.stdout.includes('    at ') && !r.stdout.includes('EADDRINUSE'), r.stdout);
    } finally {
      blocker.close();
    }
  });

  it('serve names the flag it refuses', () => {
    for (const [args, message] of [
      [['serve', '--port', 'abc'], /--port must be a number/],
      [['serve', '--port', '70000'], /--port must be a number from 0 to 65535/],
      [['serve', '--port'], /--port/],
      [['serve', '--prot', '3000'], /--prot/],
    ] as Array<[string[], RegExp]>) {
      const r = runCli(args, env);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
    }
  });

  it('exits 2 for a bad configuration value', () => {
    const r = runCli(['tenant', 'list'], { ...env, KEYHALL_CACHE_TTL_MS: 'soon' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /KEYHALL_CACHE_TTL_MS/);
  });
});
