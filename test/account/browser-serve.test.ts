/**
 * /account in Debian Chromium on the quick start tenant (`keyhall serve` in its own process,
 * http://localhost:<port>, the dev mailbox): the sessions list and ending another device's
 * session, the email change through the dev mailbox's link, a GitHub-like sign-in whose only way
 * to sign in cannot be unlinked, and the unlink once a password exists. Skipped (and said so)
 * only when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Keyhall, startKeyhall } from '../guides/guide.js';
import { CHROMIUM, launch, step } from '../mfa/browser-helpers.js';
import { PASSWORD } from '../signin/helpers.js';
import { GithubStandIn } from '../social/stand-ins.js';

const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';

describe('/account in chromium on `keyhall serve` (http://localhost)', { skip }, () => {
  let k: Keyhall;
  let gh: GithubStandIn;
  let browser: Awaited<ReturnType<typeof launch>>;

  before(async () => {
    gh = await GithubStandIn.start();
    k = await startKeyhall({ KEYHALL_EGRESS_ALLOW: '127.0.0.1/32', KEYHALL_LOG_LEVEL: 'info' });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    const out = k.output();
    assert.equal(await k.close(), 0, out);
    await gh.close();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${k.issuer}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${k.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, json: (await r.json().catch(() => ({}))) as Record<string, unknown> };
  };

  /** Another device: a password sign-in over plain HTTP with its own cookies. */
  async function signInElsewhere(email: string) {
    const jar = new Map<string, string>();
    const keep = (r: Response) => {
      for (const c of r.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair!.indexOf('=');
        jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      return r;
    };
    const cookie = () => [...jar].map(([n, v]) => `${n}=${v}`).join('; ');
    const page = keep(await fetch(`${k.issuer}/login`, { headers: { 'user-agent': 'curl/8.11' } }));
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!;
    const r = keep(
      await fetch(`${k.issuer}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: k.issuer, cookie: cookie(), 'user-agent': 'curl/8.11' },
        body: new URLSearchParams({ email, password: PASSWORD, csrf_token: csrf }),
      }),
    );
    assert.equal(r.status, 303);
  }

  it('lists and ends sessions, changes the email through the dev mailbox, refuses then allows an unlink', async () => {
    assert.match(k.issuer, /^http:\/\/localhost:\d+$/);
    const created = await api('POST', '/users', { email: 'ada@example.com', password: PASSWORD, name: 'Ada' });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    await signInElsewhere('ada@example.com');
    const page = await browser.context.newPage();

    // Not signed in: the login page, then back to /account.
    await step('/account → /login', () => page.goto(`${k.issuer}/account`));
    assert.match(page.url(), /\/login\?return_to=%2Faccount$/);
    await page.fill('#email', 'ada@example.com');
    await page.fill('#password', PASSWORD);
    await step('sign in', () => Promise.all([page.waitForURL(`${k.issuer}/account`), page.click('form[action="/login"] button[type=submit]')]));

    // Where you are signed in: this browser and the other device; end the other one.
    assert.equal(await page.locator('#sessions tr[data-session]').count(), 2);
    assert.match((await page.locator('#sessions tr[data-current]').textContent()) ?? '', /Chrome on Linux \(this device\)/);
    const other = page.locator('#sessions tr[data-session]:not([data-current])');
    assert.match((await other.textContent()) ?? '', /curl.*127\.0\.0\.1.*Password/s);
    await step('end the other session', () => Promise.all([page.waitForURL(/done=session_ended/), other.locator('button').click()]));
    assert.equal(await page.locator('#sessions tr[data-session]').count(), 1);

    // Email change: the link lands in the dev mailbox (its log line); the old address is told.
    await page.fill('#new_email', 'ada.new@example.com');
    await step('ask for a new address', () => Promise.all([page.waitForURL(/done=email_sent/), page.click('#email button[type=submit]')]));
    assert.match((await page.locator('#notice').textContent()) ?? '', /ada\.new@example\.com/);
    const link = await step('the dev mailbox line', async () => {
      for (;;) {
        const m = /"template":"email_change"[^\n]*"link":"([^"]+)"/.exec(k.output());
        if (m) return m[1]!;
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    await step('open the link', () => page.goto(link));
    await step('confirm', () => Promise.all([page.waitForURL(/done=email_changed/), page.click('form[action="/account/email/verify"] button')]));
    assert.equal(await page.locator('#current-email').textContent(), 'ada.new@example.com');
    await step('the notice to the old address', async () => {
      while (!/"to":"ada@example\.com","template":"email_changed"/.test(k.output())) await new Promise((r) => setTimeout(r, 50));
    });

    // A GitHub-like sign-in makes a user whose only way to sign in is that identity.
    const conn = await api('POST', '/social_connections', gh.connection());
    assert.equal(conn.status, 201, JSON.stringify(conn.json));
    gh.people.set('octocat', { id: 7, login: 'octocat', name: 'Mona', avatar: '', emails: [{ email: 'mona@example.com', primary: true, verified: true }] });
    gh.autoApprove = 'octocat';
    await step('sign out', () => Promise.all([page.waitForURL(/signed-out/), page.click('form[action="/logout"] button')]));
    await step('login page', () => page.goto(`${k.issuer}/login?return_to=%2Faccount`));
    await step('Continue with GitHub', () => Promise.all([page.waitForURL(`${k.issuer}/account`), page.click(`#social-${String(conn.json.id)}`)]));
    assert.match((await page.locator('#sessions tr[data-current]').textContent()) ?? '', /GitHub/);
    const unlink = page.locator('#identities form[action="/account/identities/unlink"] button');
    const refused = await step('unlink refused', () =>
      Promise.all([page.waitForResponse((r) => r.url().endsWith('/account/identities/unlink')), unlink.click()]),
    );
    assert.equal(refused[0].status(), 409);
    assert.match((await page.textContent('body')) ?? '', /only way your account signs in/);

    // With a password it can go (a new password ends the user's sessions: sign in again).
    const mona = ((await api('GET', '/users?email=mona@example.com')).json.data as Array<{ id: string }>)[0]!;
    assert.equal((await api('PATCH', `/users/${mona.id}`, { password: 'a long enough password' })).status, 200);
    await step('login page again', () => page.goto(`${k.issuer}/login?return_to=%2Faccount`));
    await step('GitHub again', () => Promise.all([page.waitForURL(`${k.issuer}/account`), page.click(`#social-${String(conn.json.id)}`)]));
    await step('unlink', () => Promise.all([page.waitForURL(/done=unlinked/), unlink.click()]));
    assert.equal(await page.locator('#identities tr[data-identity]').count(), 0);
    assert.deepEqual((await api('GET', `/users/${mona.id}/identities`)).json.data, []);
    await page.close();
  });
});
