import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { fail500, ok, type Receiver, startReceiver } from '../helpers/receiver.js';

async function until(fn: () => boolean, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

function start(args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawnServer(args, env);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, out: () => out, exited };
}

describe('webhook backlog survives SIGKILL', () => {
  let env: Record<string, string>;
  let rx: Receiver;
  let cleanup: () => Promise<void>;
  before(async () => {
    rx = await startReceiver(fail500);
    const install = await freshInstallation({
      KEYHALL_LOG_LEVEL: 'info',
      KEYHALL_EGRESS_ALLOW: '127.0.0.1/32',
      // A short schedule (seconds) so the restart finds retries waiting, not hours away.
      KEYHALL_WEBHOOK_RETRY_SCHEDULE: '0,2,2,2,2',
      KEYHALL_DISPATCH_INTERVAL_MS: '100',
    });
    env = install.env;
    cleanup = async () => {
      await rx.close();
      await install.cleanup();
    };
  });
  after(() => cleanup());

  it('delivers all 20 waiting deliveries after a restart, none lost', async () => {
    const first = start(['--port', '0'], env);
    await until(() => /API key\s+sk_live_/.test(first.out()));
    const issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(first.out())![1]!;
    const key = /API key\s+(sk_live_\S+)/.exec(first.out())![1]!;
    const call = async (method: string, p: string, body?: unknown) => {
      const r = await fetch(`${issuer}/v1${p}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await r.json()) as { id: string };
    };
    const org = (await call('POST', '/organizations', { name: 'Crash' })).id;
    await call('POST', `/organizations/${org}/webhooks`, { url: rx.url, events: ['member.added'] });
    for (let i = 0; i < 20; i++) {
      const user = (await call('POST', '/users', { email: `crash${i}@example.com` })).id;
      await call('POST', `/organizations/${org}/members`, { user_id: user });
    }
    // Every delivery has failed its first attempt and waits for a retry.
    await until(() => new Set(rx.received.map((r) => r.headers['webhook-id'])).size === 20);
    first.child.kill('SIGKILL');
    await first.exited;

    rx.respond = ok;
    const okIds = new Set<string>();
    const before = rx.received.length;
    const second = start(['--port', new URL(issuer).port], env);
    try {
      await until(() => {
        for (const r of rx.received.slice(before)) okIds.add(String(r.headers['webhook-id']));
        return okIds.size === 20;
      });
      const allIds = new Set(rx.received.map((r) => String(r.headers['webhook-id'])));
      assert.equal(allIds.size, 20, 'same ids before and after the crash');
      assert.ok(!second.out().includes('sk_live_'), 'no second bootstrap');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
