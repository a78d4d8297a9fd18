import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { getJson } from '../helpers/http.js';
import { freshInstallation } from '../helpers/db.js';

interface Proc {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Proc {
  const child = spawnServer(['--port', '0'], env);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, exited };
}

async function until(fn: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('keyhall serve (a real process)', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  before(async () => {
    ({ env, cleanup } = await freshInstallation({ KEYHALL_LOG_LEVEL: 'info' }));
  });
  after(() => cleanup());

  let issuer = '';
  let kids: string[] = [];

  it('on an empty database creates a localhost tenant and prints its key once', async () => {
    const p = start(env);
    try {
      await until(() => /API key\s+sk_live_/.test(p.out()));
      issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(p.out())?.[1] ?? '';
      assert.match(issuer, /^http:\/\/localhost:\d+$/);
      assert.match(p.out(), /curl .*\/\.well-known\/openid-configuration/);
      const meta = await getJson(`${issuer}/.well-known/openid-configuration`);
      assert.equal(meta.issuer, issuer);
      kids = (await getJson(`${issuer}/.well-known/jwks.json`)).keys.map((k: { kid: string }) => k.kid);

      // Credentials never reach the log.
      await fetch(`${issuer}/.well-known/jwks.json?access_token=query-secret-123`, {
        headers: { authorization: 'Bearer header-secret-456', cookie: 'sid=cookie-secret-789', dpop: 'dpop-secret-000' },
      });
      // An org key minted and used over /v1 appears in no log line either.
      const platformKey = /API key\s+(sk_live_\S+)/.exec(p.out())![1]!;
      const v1 = async (method: string, path: string, key: string, body?: unknown) =>
        getJson(`${issuer}/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const org = (await v1('POST', '/organizations', platformKey, { name: 'Logged' })).id;
      const orgKey = (await v1('POST', `/organizations/${org}/api_keys`, platformKey, { name: 'k', scopes: ['members:read'] })).key;
      assert.match(orgKey, /^sk_live_/);
      assert.deepEqual((await v1('GET', `/organizations/${org}/members`, orgKey)).data, []);
      await new Promise((r) => setTimeout(r, 200));
      assert.match(p.out(), /"reqId":"req_/);
      const bannerCount = p.out().split(platformKey).length - 1;
      assert.equal(bannerCount, 2, 'the platform key appears only in the banner');
      for (const secret of ['query-secret-123', 'header-secret-456', 'cookie-secret-789', 'dpop-secret-000', orgKey]) {
        assert.ok(!p.out().includes(secret), `${secret} not logged`);
      }
    } finally {
      p.child.kill('SIGTERM');
      assert.equal(await p.exited, 0);
    }
  });

  it('keeps tenant and keys across a restart and does not bootstrap again', async () => {
    const port = new URL(issuer).port;
    const child = spawnServer(['--port', port], env);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => /Server listening/.test(out));
      assert.ok(!out.includes('sk_live_'), 'no second banner');
      await until(() => out.includes(issuer));
      assert.match(out, /Serving 1 tenant:/);
      assert.ok(!out.includes('no tenant is served'), "no warning on the tenant's own port");
      const jwks = await getJson(`${issuer}/.well-known/jwks.json`);
      assert.deepEqual(jwks.keys.map((k: { kid: string }) => k.kid).sort(), [...kids].sort());
    } finally {
      child.kill('SIGINT');
      assert.equal(await exited, 0);
    }
  });

  it('prints the tenants it serves, and warns when none is on the port it listens on', async () => {
    const p = start(env);
    try {
      await until(() => /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.test(p.out()) && /no tenant is served on port/.test(p.out()));
      const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(p.out())?.[1]);
      assert.match(p.out(), new RegExp(`ten_\\w+  ${issuer.replace(/[.:/]/g, '\\$&')}`), 'the tenant and its URL');
      assert.match(p.out(), new RegExp(`no tenant is served on port ${port} \\(tenant hosts: ${new URL(issuer).host}\\)`));
      assert.match(p.out(), /keyhall tenant update/);
      const r = await fetch(`http://127.0.0.1:${port}/.well-known/openid-configuration`);
      assert.equal(r.status, 404);
      const body = (await r.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'unknown_tenant');
      assert.match(body.error_description, new RegExp(`127\\.0\\.0\\.1:${port}`));
    } finally {
      // SIGHUP (a closed terminal) stops it gracefully too, writing out the buffered log lines.
      p.child.kill('SIGHUP');
      assert.equal(await p.exited, 0);
    }
    assert.match(p.out(), /"signal":"SIGHUP","msg":"shutting down"/);
  });

  it('on SIGTERM finishes in-flight requests, then exits 0', async () => {
    const p = start({ ...env, KEYHALL_PORT: '0' });
    try {
      await until(() => /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.test(p.out()));
      const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(p.out())?.[1]);
      // A request whose body is still arriving when the signal comes.
      const response = new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/healthz',
            headers: { host: new URL(issuer).host, 'content-type': 'application/json', 'content-length': '2' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.write('{');
        setTimeout(() => {
          p.child.kill('SIGTERM');
          setTimeout(() => req.end('}'), 300);
        }, 200);
      });
      // POST on GET-only /healthz: 405 since wrong methods on known paths answer 405 (was 404).
      assert.equal(await response, 405);
      assert.equal(await p.exited, 0);
      assert.match(p.out(), /shutting down/);
    } finally {
      p.child.kill('SIGKILL');
    }
  });
});
