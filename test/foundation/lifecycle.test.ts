import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config/index.js';
import { startServer } from '../../src/server.js';
import { freshPostgresDatabase } from '../helpers/db.js';
import { request } from '../helpers/http.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer } from '../helpers/server.js';
import { v1 } from '../helpers/v1.js';

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition never held');
}

describe('readiness', () => {
  // PostgreSQL on both passes: its migration lock is what another instance's migration holds.
  it('while its own migrations run, the port answers: /healthz 200, /readyz and the rest 503', async () => {
    const database = await freshPostgresDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-test-'));
    // Kysely's migration lock on PostgreSQL (a session advisory lock), held as if another
    // instance were migrating: this instance's own migration waits behind it.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      await holder.query('select pg_advisory_lock(3853314791062309107)');
      const port = await freePort();
      const config = loadConfig(
        { KEYHALL_DATA_DIR: dataDir, KEYHALL_DATABASE_URL: database.url, KEYHALL_MASTER_KEY: randomBytes(32).toString('base64') },
        { port, host: '127.0.0.1', bootstrap: 'false', logLevel: 'silent' },
      );
      const starting = startServer(config);
      const notReady = await until(async () => request(port, { host: 'any.test', path: '/readyz' }));
      assert.equal(notReady.status, 503);
      assert.equal(notReady.json().error, 'temporarily_unavailable');
      assert.match(notReady.json().error_description, /migrations running/);
      assert.equal(notReady.headers['retry-after'], '5');
      const alive = await request(port, { host: 'any.test', path: '/healthz' });
      assert.equal(alive.status, 200);
      const token = await request(port, {
        method: 'POST',
        host: `127.0.0.1:${port}`,
        path: '/token',
        body: 'grant_type=client_credentials',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(token.status, 503);
      assert.equal(token.json().error, 'temporarily_unavailable');
      // Still starting: the migration cannot begin while the lock is held.
      assert.equal((await request(port, { host: 'any.test', path: '/readyz' })).status, 503);
      await holder.query('select pg_advisory_unlock(3853314791062309107)');
      server = await starting;
      assert.equal(server.port, port);
      const ready = await request(port, { host: 'any.test', path: '/readyz' });
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual(ready.json(), { status: 'ok' });
    } finally {
      await holder.end();
      await server?.close();
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('/readyz fails while the schema lacks a migration this build needs, then passes', async () => {
    const s = await startTestServer();
    try {
      const db = s.server.ctx.db.kysely;
      // As if another instance were still migrating: the newest migration is not applied yet.
      const last = (await db
        .selectFrom('kysely_migration' as never)
        .select(['name' as never, 'timestamp' as never])
        .orderBy('name' as never, 'desc')
        .executeTakeFirstOrThrow()) as { name: string; timestamp: string };
      await db
        .deleteFrom('kysely_migration' as never)
        .where('name' as never, '=', last.name as never)
        .execute();
      const pending = await request(s.port, { host: 'any.test', path: '/readyz' });
      assert.equal(pending.status, 503);
      assert.equal(pending.json().error, 'temporarily_unavailable');
      assert.match(pending.json().error_description, new RegExp(`migrations pending: ${last.name}`));
      assert.equal((await request(s.port, { host: 'any.test', path: '/healthz' })).status, 200, 'alive all the same');
      await db
        .insertInto('kysely_migration' as never)
        .values(last as never)
        .execute();
      const ready = await request(s.port, { host: 'any.test', path: '/readyz' });
      assert.equal(ready.status, 200, ready.text);
    } finally {
      await s.close();
    }
  });

  it('/readyz fails when the database is unreachable', async () => {
    const s = await startTestServer();
    try {
      assert.equal((await request(s.port, { host: 'any.test', path: '/readyz' })).status, 200);
      await s.server.ctx.db.close();
      const down = await request(s.port, { host: 'any.test', path: '/readyz' });
      assert.equal(down.status, 503);
      assert.equal(down.json().error, 'temporarily_unavailable');
      assert.equal(down.json().error_description, 'database unreachable');
    } finally {
      await s.server.app.close();
      await s.server.dispatcher.stop(0);
    }
  });
});

describe('shutdown', () => {
  it('hands back the lease of a webhook attempt still running when the grace period ends', async () => {
    // The receiver never answers: the attempt is still in flight when the server stops.
    const rx: Receiver = await startReceiver(() => undefined);
    const s = await startTestServer({ config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000, webhookTimeoutMs: 60_000, shutdownTimeoutMs: 300 } });
    const db = s.server.ctx.db;
    let closed = false;
    try {
      const api = v1(s, s.tenant.platformApiKey);
      const org = (await api('POST', '/organizations', { name: 'Hooks' })).json().id as string;
      assert.equal((await api('POST', `/organizations/${org}/webhooks`, { url: rx.url, events: ['member.added'] })).status, 201);
      const user = (await api('POST', '/users', { email: 'grace@example.com' })).json().id as string;
      assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user })).status, 201);
      assert.equal(await s.server.dispatcher.tick(), 1);
      await rx.waitFor(1);
      const leased = await db.kysely.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
      assert.equal(leased.status, 'delivering');
      assert.ok(leased.lease_owner);

      // Stop the dispatcher the way close() does, but keep the database to look at.
      const started = Date.now();
      await s.server.dispatcher.stop(300);
      assert.ok(Date.now() - started < 5_000, 'the stop does not wait for the webhook timeout');
      const back = await db.kysely.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
      assert.equal(back.status, 'pending', 'due again at once for another instance');
      assert.equal(back.lease_owner, null);
      assert.equal(back.lease_until, null);
      assert.equal(back.attempts, 0, 'an abandoned attempt is not counted');
      assert.equal((await db.kysely.selectFrom('webhook_attempts').selectAll().execute()).length, 0);
      await s.close();
      closed = true;
    } finally {
      if (!closed) await s.close();
      await rx.close();
    }
  });
});
