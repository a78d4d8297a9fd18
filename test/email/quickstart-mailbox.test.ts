/**
 * The quick start without any mail server (issue 29): `keyhall serve` in its own process on the
 * http://localhost tenant keeps mail in the dev mailbox and prints each message as one log line
 * with its link; verification and password reset work by following those links. No other log
 * line carries a token or a link.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { Browser } from '../signin/helpers.js';
import { waitFor } from './smtp.js';

describe('the dev mailbox on the quick start tenant (`keyhall serve`, http://localhost)', () => {
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let out = '';
  let issuer = '';
  let platformKey = '';
  let cleanup: () => Promise<void>;
  before(async () => {
    const install = await freshInstallation({ KEYHALL_LOG_LEVEL: 'info' });
    cleanup = install.cleanup;
    child = spawnServer(['--port', '0'], install.env);
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => (/API key\s+sk_live_\S+/.test(out) && /Serving 1 tenant/.test(out) ? true : undefined), 'the server', 90_000);
    issuer = /issuer\s+(http:\/\/localhost:\d+)/.exec(out)![1]!;
    platformKey = /API key\s+(sk_live_\S+)/.exec(out)![1]!;
  });
  after(async () => {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    await cleanup();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${platformKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };
  const mailboxLines = () =>
    out
      .split('\n')
      .filter((l) => l.includes('"dev_mailbox":true'))
      .map((l) => JSON.parse(l) as { to: string; template: string; link: string; msg: string });
  const linkFor = (to: string, template: string, n = 1) =>
    waitFor(() => mailboxLines().filter((l) => l.to === to && l.template === template)[n - 1]?.link, `${template} to ${to}`);
  const browser = () => new Browser(Number(new URL(issuer).port), new URL(issuer).host);
  const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

  it('verifies an address and resets a password from the links the log line prints', async () => {
    assert.equal((await api('GET', '/email_settings')).json.transport, 'dev_mailbox');
    const user = await api('POST', '/users', { email: 'ada@example.com', password: 'the first password' });
    assert.equal(user.status, 201);
    const sent = await api('POST', `/users/${user.json.id as string}/verification_email`);
    assert.equal(sent.status, 202);
    const verify = await linkFor('ada@example.com', 'verify_email');
    assert.ok(verify.startsWith(`${issuer}/verify-email?token=vfy_`), verify);
    const b = browser();
    const done = await b.submit(await b.get(pathOf(verify)));
    assert.equal(done.status, 200);
    assert.equal((await api('GET', `/users/${user.json.id as string}`)).json.email_verified, true);

    const forgot = await b.get('/login/forgot');
    assert.equal((await b.submit(forgot, { email: 'ada@example.com' })).status, 200);
    const reset = await linkFor('ada@example.com', 'password_reset');
    assert.ok(reset.startsWith(`${issuer}/reset-password?token=rst_`), reset);
    const changed = await b.submit(await b.get(pathOf(reset)), { password: 'the second password', password_repeat: 'the second password' });
    assert.equal(changed.status, 200);
    const signIn = browser();
    assert.equal((await signIn.submit(await signIn.get('/login'), { email: 'ada@example.com', password: 'the second password' })).status, 303);

    const outbox = (await api('GET', '/email_outbox')).json.data as Array<{ template: string; status: string; transport: string }>;
    assert.deepEqual(
      outbox.map((e) => [e.template, e.status, e.transport]),
      [
        ['password_reset', 'sent', 'dev_mailbox'],
        ['verify_email', 'sent', 'dev_mailbox'],
      ],
    );
    // One line per message; no other line names a token or a link.
    assert.equal(mailboxLines().length, 2);
    const others = out.split('\n').filter((l) => !l.includes('"dev_mailbox":true'));
    assert.ok(others.length > 5);
    for (const line of others) assert.ok(!/vfy_|rst_|verify-email\?|reset-password\?/.test(line), `a log line carries a link: ${line.slice(0, 200)}`);
  });
});
