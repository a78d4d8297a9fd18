import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { request } from '../helpers/http.js';

/** A port nobody listens on right now (bound to 0, then released). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls /readyz as fast as a load balancer might, until it answers 200. */
async function untilReady(port: number, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const status = await request(port, { path: '/readyz' }).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > end) throw new Error('never ready');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('keyhall serve on an empty database: ready means the first tenant exists', () => {
  for (const round of [1, 2, 3]) {
    it(`answers discovery for localhost:<port> on the first request after /readyz (round ${round})`, async () => {
      const { env, cleanup } = await freshInstallation({ KEYHALL_LOG_LEVEL: 'silent' });
      const port = await freePort();
      const child = spawnServer(['--port', String(port)], env);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      let status = 0;
      let issuer: unknown;
      try {
        await untilReady(port);
        const r = await request(port, { host: `localhost:${port}`, path: '/.well-known/openid-configuration' });
        status = r.status;
        issuer = status === 200 ? r.json().issuer : r.text;
        // Stop it once start-up is over (the banner printed, the signal handlers installed).
        while (!/Serving 1 tenant/.test(out) && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
      } finally {
        child.kill('SIGTERM');
        await exited;
        await cleanup();
      }
      assert.equal(status, 200, String(issuer));
      assert.equal(issuer, `http://localhost:${port}`);
      assert.equal(await exited, 0, out);
    });
  }
});
