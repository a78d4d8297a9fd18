/**
 * An invitation on the quick start (issue 29 point 5): `keyhall serve` in its own process on the
 * http://localhost tenant, no mail server. The invitation lands in the dev mailbox and its one log
 * line carries the link; following it creates the invitee's account and membership. No other log
 * line carries the token or the link.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { Browser } from '../signin/helpers.js';
import { waitFor } from './smtp.js';

describe('an invitation through the dev mailbox (`keyhall serve`, http://localhost)', () => {
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

  it('invites, prints the link once, and the link makes the account and the membership', async () => {
    const org = await api('POST', '/organizations', { name: 'Acme' });
    const invited = await api('POST', `/organizations/${org.json.id as string}/invitations`, { email: 'ada@example.com', roles: ['admin'] });
    assert.equal(invited.status, 201);
    const link = await waitFor(
      () =>
        out
          .split('\n')
          .filter((l) => l.includes('"dev_mailbox":true'))
          .map((l) => JSON.parse(l) as { to: string; template: string; link: string })
          .find((l) => l.to === 'ada@example.com' && l.template === 'invitation')?.link,
      'the invitation in the dev mailbox',
    );
    assert.ok(link.startsWith(`${issuer}/invitations/accept?token=ivt_`), link);
    const b = new Browser(Number(new URL(issuer).port), new URL(issuer).host);
    const page = await b.get(new URL(link).pathname + new URL(link).search);
    assert.equal(page.status, 200);
    const done = await b.submit(page, { password: 'a good password', password_repeat: 'a good password' });
    assert.equal(done.status, 200);
    assert.match(done.text, /You are now a member of Acme/);
    const members = (await api('GET', `/organizations/${org.json.id as string}/members`)).json.data as Array<{ roles: string[]; user: { email: string } }>;
    assert.deepEqual(
      members.map((m) => [m.user.email, m.roles]),
      [['ada@example.com', ['admin']]],
    );
    const listed = (await api('GET', `/organizations/${org.json.id as string}/invitations`)).json.data as Array<{ status: string }>;
    assert.equal(listed[0]!.status, 'accepted');
    const token = new URL(link).searchParams.get('token')!;
    const others = out.split('\n').filter((l) => !l.includes('"dev_mailbox":true'));
    for (const line of others) assert.ok(!line.includes(token) && !line.includes('invitations/accept?'), `a log line carries the link: ${line.slice(0, 200)}`);
  });
});
