/**
 * Passkeys in a real browser: Debian chromium driven by playwright-core, with a CDP virtual
 * authenticator (ctap2, internal, resident key, user verification; AAGUID
 * 01020304-0506-0708-0102-030405060708, `packed` attestation when asked for `direct`). Skipped only
 * when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { basic } from '../oauth/helpers.js';
import { v1 } from '../helpers/v1.js';
import { PASSWORD, S256, type SigninTestServer, startSigninServer, VERIFIER } from '../signin/helpers.js';
import { CHROMIUM, launch, passwordToMfa, VIRTUAL_AAGUID, virtualAuthenticator } from './browser-helpers.js';

const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';
describe('passkeys in a real browser (chromium, CDP virtual authenticator)', { skip }, () => {
  let s: SigninTestServer;
  let browser: Awaited<ReturnType<typeof launch>>;
  let app: http.Server;
  let redirectUri: string;
  before(async () => {
    // WebAuthn needs a domain RP ID: the tenant is served on localhost:<port>.
    s = await startSigninServer({ localhost: true });
    app = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app callback'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(app.address() as { port: number }).port}/cb`;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
    app?.close();
  });

  it('registers a passkey on /mfa, then signs in with it through /authorize; the ID token carries amr hwk/swk', async () => {
    const user = await s.createUser('chromium@example.com');
    const page = await browser.context.newPage();
    const cspViolations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    await virtualAuthenticator(browser.context, page);
    await passwordToMfa(page, s.issuer, user.email);
    await page.fill('#passkey-name', 'Virtual authenticator');
    await Promise.all([page.waitForSelector('[data-passkey]'), page.click('#passkey-register')]);
    assert.match((await page.locator('[data-passkey] strong').textContent()) ?? '', /Virtual authenticator/);

    // Signed out, the passkey alone signs in (discoverable credential, user verification).
    await browser.context.clearCookies();
    const web = await s.webClient({ redirect_uris: [redirectUri] });
    const params = new URLSearchParams({ client_id: web.client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'st', code_challenge: await S256(VERIFIER), code_challenge_method: 'S256' });
    await page.goto(`${s.issuer}/authorize?${params}`);
    assert.match(page.url(), /\/login\?flow=fl_/);
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(`${redirectUri}?`)), page.click('#passkey-login').catch(() => undefined)]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'st');
    const tokens = (
      await s.post('/token', { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: VERIFIER }, { authorization: basic(web.client_id, web.client_secret) })
    ).json();
    const jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const { payload } = await jwtVerify(tokens.id_token, jwks, { issuer: s.issuer, audience: web.client_id });
    assert.equal(payload.sub, user.id);
    const amr = payload.amr as string[];
    assert.ok(amr.includes('hwk') || amr.includes('swk'), JSON.stringify(amr));
    assert.ok(amr.includes('mfa'));
    assert.equal(payload.acr, 'phr');
    assert.deepEqual(cspViolations, []);
    await page.close();
  });

  it("under an organization's required MFA policy, a member without a factor adds a passkey on the enrolment page and the flow completes (amr pwd + hwk/swk + mfa)", async () => {
    const user = await s.createUser('enrol-chromium@example.com');
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Required' })).json().id;
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user.id })).status, 201);
    assert.equal((await api('PUT', `/organizations/${org}/mfa_policy`, { policy: 'required' })).status, 200);
    const page = await browser.context.newPage();
    await browser.context.clearCookies();
    await virtualAuthenticator(browser.context, page);
    const web = await s.webClient({ redirect_uris: [redirectUri] });
    const params = new URLSearchParams({ client_id: web.client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'en', code_challenge: await S256(VERIFIER), code_challenge_method: 'S256' });
    await page.goto(`${s.issuer}/authorize?${params}`);
    await page.fill('#email', user.email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/mfa\/challenge\?flow=fl_/), page.click('form[action="/login"] button[type=submit]')]);
    await page.fill('#passkey-name', 'Enrolled at sign-in');
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(`${redirectUri}?`)), page.click('#passkey-enrol')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'en');
    const tokens = (
      await s.post('/token', { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: VERIFIER }, { authorization: basic(web.client_id, web.client_secret) })
    ).json();
    const amr = decodeJwt(tokens.id_token).amr as string[];
    assert.equal(amr[0], 'pwd');
    assert.ok(amr.includes('hwk') || amr.includes('swk'), JSON.stringify(amr));
    assert.ok(amr.includes('mfa'));
    assert.deepEqual((await api('GET', `/users/${user.id}/passkeys`)).json().data.map((p: { name: string }) => p.name), ['Enrolled at sign-in']);
    await page.close();
  });

  it('with an allowlist that excludes the virtual authenticator, the page shows the refusal', async () => {
    const user = await s.createUser('strict-chromium@example.com');
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Strict' })).json().id;
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user.id })).status, 201);
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: ['cb69481e-8ff7-4039-93ec-0a2729a154a8'] })).status, 200);
    const page = await browser.context.newPage();
    await virtualAuthenticator(browser.context, page);
    await passwordToMfa(page, s.issuer, user.email);
    await Promise.all([page.waitForSelector('#mfa-error'), page.click('#passkey-register')]);
    const message = (await page.locator('#mfa-error').textContent()) ?? '';
    assert.match(message, /does not allow this kind of passkey/);
    assert.match(message, new RegExp(VIRTUAL_AAGUID));
    assert.equal(await page.locator('[data-passkey]').count(), 0);
    const rejected = (await api('GET', '/events?types=passkey.rejected')).json().data;
    assert.equal(rejected.at(-1).data.aaguid, VIRTUAL_AAGUID);
    await page.close();
  });
});
