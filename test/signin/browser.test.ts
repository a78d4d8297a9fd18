/**
 * The hosted login in a real browser: Debian chromium driven by playwright-core. Skipped (and
 * said so) only when /usr/bin/chromium is missing; .ci/run installs it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { type BrowserContext, chromium } from 'playwright-core';
import { basic } from '../oauth/helpers.js';
import { v1 } from '../helpers/v1.js';
import { PASSWORD, S256, type SigninTestServer, startSigninServer, VERIFIER } from './helpers.js';

// KEYHALL_TEST_CHROMIUM only lets a test run check the skip path; CI uses Debian's /usr/bin/chromium.
const CHROMIUM = process.env.KEYHALL_TEST_CHROMIUM ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';
// A 1×1 PNG served for the brand logo.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

describe('hosted login in a real browser (chromium)', { skip }, () => {
  let s: SigninTestServer;
  let context: BrowserContext;
  let profile: string;
  // The application's callback: a real loopback server (Playwright does not intercept redirect hops).
  let app: http.Server;
  let redirectUri: string;
  const shots = mkdtempSync(path.join(os.tmpdir(), 'keyhall-signin-shots-'));
  before(async () => {
    s = await startSigninServer();
    app = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app callback'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(app.address() as { port: number }).port}/cb`;
    profile = mkdtempSync(path.join(os.tmpdir(), 'keyhall-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    // The logo CDN is played by the test.
    await context.route('https://cdn.acme.example/**', (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PNG }));
  });
  after(async () => {
    await context?.close();
    await s?.close();
    app?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  it('signs in on the branded login page (PAR, PKCE) and the code redeems for a verifiable ID token', async (t) => {
    const user = await s.createUser('browser@example.com');
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Acme' })).json();
    // organization= signs in to the organization: the user is a member (docs/authorization.md).
    assert.equal((await api('POST', `/organizations/${org.id}/members`, { user_id: user.id })).status, 201);
    await api('PATCH', `/organizations/${org.id}`, {
      brand_display_name: 'Acme Corporation',
      brand_primary_color: '#d9480f',
      brand_logo_url: 'https://cdn.acme.example/logo.png',
    });
    const web = await s.webClient({ client_name: 'Acme Portal', redirect_uris: [redirectUri] });
    const pushed = await s.post(
      '/par',
      {
        response_type: 'code',
        client_id: web.client_id,
        redirect_uri: redirectUri,
        scope: 'openid email',
        state: 'browser-state',
        nonce: 'n-1',
        code_challenge: await S256(VERIFIER),
        code_challenge_method: 'S256',
        organization: org.id,
      },
      { authorization: basic(web.client_id, web.client_secret) },
    );
    assert.equal(pushed.status, 201);

    const page = await context.newPage();
    const cspViolations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    await page.goto(`${s.issuer}/authorize?client_id=${web.client_id}&request_uri=${encodeURIComponent(pushed.json().request_uri)}`);
    assert.match(page.url(), /\/login\?flow=flw_/);
    assert.equal(await page.locator('.brand-name').textContent(), 'Acme Corporation');
    assert.equal(
      await page
        .locator('header img')
        .evaluate(
          (img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth,
        ),
      1,
      'the logo loads under the CSP',
    );
    const border = await page
      .locator('header')
      .evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { borderTopColor: string } }).getComputedStyle(el).borderTopColor);
    assert.equal(border, 'rgb(217, 72, 15)', 'the brand colour applies (nonce-allowed style)');
    const shot = path.join(shots, 'branded-login.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(statSync(shot).size > 1000);
    t.diagnostic(`screenshot of the branded login page: ${shot}`);

    // A wrong password first: the same page again with a generic message.
    await page.fill('#email', user.email);
    await page.fill('#password', 'not the password');
    await page.click('button[type=submit]');
    assert.match((await page.locator('[role=alert]').textContent()) ?? '', /email or password is incorrect/);

    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(`${redirectUri}?`)), page.click('button[type=submit]')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'browser-state');
    assert.equal(callback.searchParams.get('iss'), s.issuer);
    assert.deepEqual(cspViolations, []);

    const cookies = await context.cookies(s.issuer);
    const session = cookies.find((c) => c.name === 'keyhall_session')!;
    assert.ok(session.httpOnly);
    assert.equal(session.sameSite, 'Lax');
    assert.equal(session.path, '/');

    const tokens = (
      await s.post(
        '/token',
        { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: VERIFIER },
        { authorization: basic(web.client_id, web.client_secret) },
      )
    ).json();
    const jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const { payload } = await jwtVerify(tokens.id_token, jwks, { issuer: s.issuer, audience: web.client_id, algorithms: ['RS256'] });
    assert.equal(payload.sub, user.id);
    assert.equal(payload.nonce, 'n-1');

    // The sessions page in the same browser lists this device.
    await page.goto(`${s.issuer}/sessions`);
    assert.match((await page.locator('table').first().textContent()) ?? '', /this device/);
  });
});
