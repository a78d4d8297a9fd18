/**
 * The email outbox survives SIGKILL (issue 29 "Must show"): `keyhall serve` in its own process
 * sends to a real SMTP server (smtp-server) that deduplicates on Message-ID, as receiving servers
 * do. The process is killed twice: once after the messages' transaction committed while the
 * sender is still connecting (nothing delivered), once after the receiver has a message but
 * before the process saw the answer (delivered, not recorded). After each restart the claims of
 * the dead process come back when their lease runs out (the test moves the lease's end into the
 * past instead of waiting two minutes), and every message arrives exactly once. (SMTP 4xx retried
 * and 5xx failed: email.test.ts.)
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { openDatabase } from '../../src/storage/db.js';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { waitFor } from './smtp.js';

type Mode = 'accept' | 'hold-connection' | 'kill-after-data';

describe('the email outbox under SIGKILL (`keyhall serve` and a deduplicating SMTP receiver)', () => {
  /** Every DATA received, duplicates included; the mailbox keeps one per Message-ID. */
  const deliveries: string[] = [];
  const mailbox = new Map<string, string>();
  const held: Array<() => void> = [];
  let mode: Mode = 'accept';
  let child: ChildProcess | undefined;
  let out = '';
  let issuer = '';
  let platformKey = '';
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let smtp: SMTPServer;

  let exit: Promise<NodeJS.Signals | null> = Promise.resolve(null);

  const killChild = async () => {
    child!.kill('SIGKILL');
    assert.equal(await exit, 'SIGKILL');
    child = undefined;
  };

  /** Starts `keyhall serve` on the same installation (and, after the first, on the tenant's port); `exit` resolves with the signal that ends it. */
  const spawnChild = () => {
    out = '';
    const c = spawnServer(['--port', issuer ? new URL(issuer).port : '0'], env);
    c.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    exit = new Promise((resolve) => c.once('exit', (_code, signal) => resolve(signal)));
    child = c;
  };

  const start = async (first = false) => {
    spawnChild();
    await waitFor(() => (/Serving 1 tenant/.test(out) && (!first || /API key\s+sk_live_\S+/.test(out)) ? true : undefined), 'the server', 90_000);
    if (!first) return;
    issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(out)![1]!;
    platformKey = /API key\s+(sk_live_\S+)/.exec(out)![1]!;
  };

  /** What a dead process leaves: rows `sending` under its lease. Time passing would end the lease; here it is moved. */
  const endLeases = async () => {
    const db = openDatabase({ databaseUrl: env.KEYHALL_DATABASE_URL, dataDir: env.KEYHALL_DATA_DIR! });
    try {
      const r = await db.kysely.updateTable('email_outbox').set({ lease_until: 0 }).where('status', '=', 'sending').executeTakeFirst();
      return Number(r.numUpdatedRows);
    } finally {
      await db.close();
    }
  };

  const outbox = async () => {
    const db = openDatabase({ databaseUrl: env.KEYHALL_DATABASE_URL, dataDir: env.KEYHALL_DATA_DIR! });
    try {
      return await db.kysely.selectFrom('email_outbox').select(['id', 'status', 'message_id', 'message']).orderBy('id').execute();
    } finally {
      await db.close();
    }
  };

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${platformKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onConnect(_session, callback) {
        // The process is connecting to send: it is killed here, before anything is delivered.
        if (mode === 'hold-connection') held.push(() => callback(new Error('closing')));
        else callback();
      },
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const messageId = /^Message-ID: *(.*)$/im.exec(raw)?.[1]?.trim() ?? '';
          deliveries.push(messageId);
          if (!mailbox.has(messageId)) mailbox.set(messageId, raw);
          // Delivered, and the process dies before it reads the answer.
          if (mode === 'kill-after-data' && child) {
            child.kill('SIGKILL');
            return;
          }
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    const install = await freshInstallation({
      KEYHALL_LOG_LEVEL: 'info',
      KEYHALL_SMTP_URL: `smtp://127.0.0.1:${port}`,
      KEYHALL_DISPATCH_INTERVAL_MS: '100',
    });
    env = install.env;
    cleanup = install.cleanup;
    await start(true);
  });
  after(async () => {
    if (child) await killChild();
    for (const release of held.splice(0)) release();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await cleanup();
  });

  it('loses no message and shows none twice when killed between the transaction and the send, and between the delivery and its record', async () => {
    // 1. Three messages committed (the API answered); the sender is connecting when the process dies.
    mode = 'hold-connection';
    const users: string[] = [];
    for (const email of ['ada@example.com', 'bob@example.com', 'cyd@example.com']) {
      const u = await api('POST', '/users', { email, password: 'a good password' });
      assert.equal(u.status, 201);
      users.push(u.json.id as string);
      assert.equal((await api('POST', `/users/${u.json.id as string}/verification_email`)).status, 202);
    }
    await waitFor(() => (held.length > 0 ? true : undefined), 'the sender connecting');
    await killChild();
    for (const release of held.splice(0)) release();
    assert.equal(deliveries.length, 0, 'nothing was delivered before the kill');
    assert.equal((await outbox()).length, 3, 'the three messages are in the outbox');
    assert.ok((await endLeases()) > 0, 'the dead process held claims');

    // 2. The next process delivers a message and dies before it reads the 250.
    mode = 'kill-after-data';
    spawnChild();
    assert.equal(await exit, 'SIGKILL', 'killed by the receiver once it had the message');
    child = undefined;
    assert.ok(deliveries.length >= 1, 'a message reached the receiver before the kill');
    const unrecorded = deliveries[0]!;
    assert.ok((await endLeases()) > 0, 'the dead process held claims');

    // 3. A third process finishes: what was delivered without a record is sent again with its Message-ID.
    mode = 'accept';
    await start();
    const rows = await waitFor(
      async () => {
        const r = await outbox();
        return r.every((x) => x.status === 'sent') ? r : undefined;
      },
      'every message sent',
      30_000,
    );
    assert.equal(rows.length, 3);
    assert.ok(
      rows.every((r) => r.message === null),
      'the bodies are gone once sent',
    );
    assert.deepEqual([...mailbox.keys()].sort(), rows.map((r) => r.message_id).sort(), 'every message arrived, none lost');
    assert.equal(
      deliveries.filter((d) => d === unrecorded).length,
      2,
      'the unrecorded delivery was repeated with the same Message-ID (the receiver shows it once)',
    );
    assert.equal(mailbox.size, 3, 'the deduplicating receiver shows each message once');
    for (const to of ['ada@example.com', 'bob@example.com', 'cyd@example.com'])
      assert.equal([...mailbox.values()].filter((raw) => new RegExp(`^To: ${to}`, 'im').test(raw)).length, 1, `one message to ${to}`);
    const sent = (await api('GET', '/events?types=email.sent&limit=100')).json.data as unknown[];
    assert.equal(sent.length, 3, 'one email.sent per message');
  });
});
