/**
 * Sign-up and passwordless sign-in on the quick start (issue 29 points 4 and 6): `keyhall serve`
 * in its own process on the http://localhost tenant, no mail server; the dev mailbox's log line
 * gives the code and the link, which finish the sign-up and the sign-in.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { spawnServer } from '../helpers/cli.js';
import { freshInstallation } from '../helpers/db.js';
import { waitFor } from '../email/smtp.js';
import { Browser, location, PASSWORD } from '../signin/helpers.js';

describe('sign-up and passwordless sign-in with the dev mailbox (`keyhall serve`, http://localhost)', () => {
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
  const mailFor = (to: string, template: string) =>
    waitFor(
      () =>
        out
          .split('\n')
          .filter((l) => l.includes('"dev_mailbox":true'))
          .map((l) => JSON.parse(l) as { to: string; template: string; link?: string; code?: string })
          .find((l) => l.to === to && l.template === template),
      `${template} to ${to}`,
    );
  const browser = () => new Browser(Number(new URL(issuer).port), new URL(issuer).host);
  const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

  it('signs up with the code from the log line, then signs in by the emailed link', async () => {
    const set = await api('PUT', '/signin_policy', { signup: 'open', require_verified_email: true, passwordless: ['email_code', 'magic_link'] });
    assert.equal(set.status, 200, JSON.stringify(set.json));
    const b = browser();
    const login = await b.get('/login?return_to=%2Fsessions');
    assert.match(login.text, /href="\/signup\?return_to=%2Fsessions" id="create-account"/);
    const form = await b.get('/signup?return_to=%2Fsessions');
    const sent = await b.submit(form, { email: 'ada@example.com', password: PASSWORD, password_repeat: PASSWORD });
    assert.equal(sent.status, 200);
    const signup = await mailFor('ada@example.com', 'signup_verify');
    assert.match(signup.code ?? '', /^\d{6}$/);
    assert.ok(signup.link?.startsWith(`${issuer}/signup/verify?token=sgn_`), signup.link);
    const created = await b.submit(sent, { code: signup.code! });
    assert.equal(created.status, 303);
    assert.equal(location(created), '/sessions');
    assert.equal((await b.get('/sessions')).status, 200);

    const other = browser();
    const emailForm = [...login.text.matchAll(/<form method="post" action="([^"]+)">/g)].findIndex((m) => m[1] === '/login/email');
    const asked = await other.submit(await other.get('/login?return_to=%2Fsessions'), { email: 'ada@example.com' }, emailForm);
    assert.equal(asked.status, 200);
    const signin = await mailFor('ada@example.com', 'signin_email');
    assert.ok(signin.link?.startsWith(`${issuer}/login/email/verify?token=mgl_`), signin.link);
    const done = await other.submit(await other.get(pathOf(signin.link!)));
    assert.equal(done.status, 303);
    assert.equal(location(done), '/sessions');
    // No other log line carries a link or its token.
    for (const line of out.split('\n').filter((l) => !l.includes('"dev_mailbox":true')))
      assert.ok(!/sgn_|mgl_|signup\/verify\?|email\/verify\?/.test(line), `a log line carries a link: ${line.slice(0, 200)}`);
  });
});
