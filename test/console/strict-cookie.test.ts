import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, PASSWORD } from './helpers.js';

const ADMIN = 'strict@console.test';
const CONSOLE_COOKIE = 'keyhall_console';

// The console's SameSite=Strict cookie (docs/console.md "Signing in"): the Lax session cookie
// alone never reaches the console API; the console cookie is minted by a page load of a
// signed-in browser or by the setup link, is bound to its session, and ends with it.
describe('console cookie (SameSite=Strict)', () => {
  let s: TestServer;
  const clock = new ManualClock(Date.parse('2026-02-01T00:00:00Z'));
  const v1 = (path: string) => s.request({ path, headers: { authorization: `Bearer ${s.tenant.platformApiKey}` } });

  /** Signs in on /login only: the session cookie, no console page load yet. */
  const loginOnly = async (c: ConsoleClient, email = ADMIN) => {
    const page = await c.browser.get('/login?return_to=%2Fconsole%2F');
    const r = await c.browser.submit(page, { email, password: PASSWORD });
    assert.equal(r.status, 303, r.text);
    assert.ok(c.browser.cookies.get('keyhall_session'));
    assert.equal(c.browser.cookies.get(CONSOLE_COOKIE), undefined, '/login itself sets no console cookie');
  };
  const loadConsole = (c: ConsoleClient) => c.call('GET', '/console/', undefined, { origin: undefined, 'x-csrf-token': undefined });

  before(async () => {
    s = await startTestServer({ clock });
    const c = new ConsoleClient(s);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${s.tenant.setupToken}`)).json().csrf_token;
    const made = await c.call('POST', '/console/api/setup', { token: s.tenant.setupToken, email: ADMIN, password: PASSWORD });
    assert.equal(made.status, 201, made.text);
  });
  after(() => s.close());

  it('the session cookie alone is refused (401 login_required) on reads and mutations; a page load mints a Strict, HttpOnly cookie', async () => {
    const c = new ConsoleClient(s);
    await loginOnly(c);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${'x'.repeat(43)}`)).json().csrf_token;
    for (const [method, path] of [
      ['GET', '/console/api/session'],
      ['GET', '/console/api/organizations'],
      ['POST', '/console/api/organizations'],
      ['GET', '/console/api/mfa'],
      ['POST', '/console/api/mfa/totp'],
    ] as const) {
      const r = await c.call(method, path, method === 'POST' && path.endsWith('organizations') ? { name: 'Nope' } : undefined);
      assert.equal(r.status, 401, `${method} ${path}: ${r.text}`);
      assert.equal(r.json().error, 'login_required');
      assert.match(r.json().error_description, /console cookie/);
    }
    assert.equal((await v1('/v1/organizations')).json().data.length, 0, 'nothing was created');

    const page = await loadConsole(c);
    const set = (page.headers['set-cookie'] ?? []).find((h) => h.startsWith(`${CONSOLE_COOKIE}=`));
    assert.ok(set, `a console cookie is set: ${JSON.stringify(page.headers['set-cookie'])}`);
    assert.match(set, /; SameSite=Strict/i);
    assert.match(set, /; HttpOnly/i);
    assert.match(set, /; Path=\//i);
    assert.doesNotMatch(set, /Domain=/i);
    assert.doesNotMatch(set, /Secure/i, 'no Secure on an http loopback issuer');
    assert.equal((await c.call('GET', '/console/api/session')).status, 200);
    const org = await c.call('POST', '/console/api/organizations', { name: 'With both cookies' });
    assert.equal(org.status, 201, org.text);
    // Already bound: the next page load sets nothing.
    assert.equal((await loadConsole(c)).headers['set-cookie'], undefined);
  });

  it('an anonymous page load sets no console cookie; a wrong or foreign value is refused', async () => {
    const anonymous = new ConsoleClient(s);
    const page = await loadConsole(anonymous);
    assert.ok(!(page.headers['set-cookie'] ?? []).some((h) => h.startsWith(`${CONSOLE_COOKIE}=`)));

    const a = new ConsoleClient(s);
    await a.signIn(ADMIN);
    const b = new ConsoleClient(s);
    await b.signIn(ADMIN);
    assert.equal((await a.call('GET', '/console/api/session')).status, 200);
    // b's console cookie with a's session: bound to another session.
    const foreign = await a.call('GET', '/console/api/session', undefined, {
      cookie: `keyhall_session=${a.browser.cookies.get('keyhall_session')}; ${CONSOLE_COOKIE}=${b.browser.cookies.get(CONSOLE_COOKIE)}`,
    });
    assert.equal(foreign.status, 401);
    assert.equal(foreign.json().error, 'login_required');
    a.browser.cookies.set(CONSOLE_COOKIE, 'A'.repeat(43));
    const forged = await a.call('GET', '/console/api/session');
    assert.equal(forged.status, 401);
    assert.equal(forged.json().error, 'login_required');
  });

  it('logout ends it: the old cookies are refused, and a new login needs a new page load', async () => {
    const c = new ConsoleClient(s);
    await c.signIn(ADMIN);
    assert.equal((await c.call('GET', '/console/api/session')).status, 200);
    const oldSession = c.browser.cookies.get('keyhall_session')!;
    const oldConsole = c.browser.cookies.get(CONSOLE_COOKIE)!;
    const logoutPage = await c.browser.get('/logout');
    const out = await c.browser.submit(logoutPage);
    assert.equal(out.status, 303, out.text);
    const replay = await c.call('GET', '/console/api/session', undefined, { cookie: `keyhall_session=${oldSession}; ${CONSOLE_COOKIE}=${oldConsole}` });
    assert.equal(replay.status, 401);
    assert.equal(replay.json().error, 'login_required');

    // Signed in again in the same browser: the console cookie of the ended session does not count.
    c.browser.cookies.delete(CONSOLE_COOKIE);
    await loginOnly(c);
    c.browser.cookies.set(CONSOLE_COOKIE, oldConsole);
    const stale = await c.call('GET', '/console/api/session');
    assert.equal(stale.status, 401);
    assert.equal(stale.json().error, 'login_required');
    assert.ok(
      (await loadConsole(c)).headers['set-cookie']?.some((h) => h.startsWith(`${CONSOLE_COOKIE}=`)),
      're-minted for the new session',
    );
    assert.equal((await c.call('GET', '/console/api/session')).status, 200);
  });

  it('the setup link signs the new administrator in with both cookies (login.succeeded, method setup_link)', async () => {
    const token = await s.server.ctx.admins.issueSetupToken(s.tenant.tenant.id);
    const c = new ConsoleClient(s);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${token}`)).json().csrf_token;
    const made = await c.call('POST', '/console/api/setup', { token, email: 'second@console.test', password: PASSWORD });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json().second_factor_required, false);
    const set = made.headers['set-cookie'] ?? [];
    assert.ok(set.some((h) => h.startsWith('keyhall_session=') && /SameSite=Lax/i.test(h)));
    assert.ok(set.some((h) => h.startsWith(`${CONSOLE_COOKIE}=`) && /SameSite=Strict/i.test(h) && /HttpOnly/i.test(h)));
    const me = await c.call('GET', '/console/api/session');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.json().user.email, 'second@console.test');
    const logins = (await v1('/v1/events?types=login.succeeded')).json().data as Array<{ actor: { id: string }; data: Record<string, unknown> }>;
    const login = logins.find((e) => e.data.user_id === made.json().user.id);
    assert.equal(login?.data.method, 'setup_link');
    assert.deepEqual(login?.actor, { type: 'user', id: made.json().user.id });
  });

  it('uses __Host-keyhall_console with Secure on an https issuer', async () => {
    const t = await s.createTenant('strict-secure.localhost', 'https://strict-secure.localhost');
    const c = new ConsoleClient(s, t.tenant);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${t.setupToken}`)).json().csrf_token;
    const made = await c.call('POST', '/console/api/setup', { token: t.setupToken, email: ADMIN, password: PASSWORD });
    assert.equal(made.status, 201, made.text);
    const set = (made.headers['set-cookie'] ?? []).find((h) => h.startsWith(`__Host-${CONSOLE_COOKIE}=`));
    assert.ok(set, JSON.stringify(made.headers['set-cookie']));
    assert.match(set, /; Secure/i);
    assert.match(set, /; Path=\//i);
    assert.match(set, /; SameSite=Strict/i);
    assert.equal((await c.call('GET', '/console/api/session')).status, 200);
    c.browser.cookies.delete(`__Host-${CONSOLE_COOKIE}`);
    const without = await c.call('GET', '/console/api/session');
    assert.equal(without.status, 401);
    assert.equal(without.json().error, 'login_required');
  });
});
