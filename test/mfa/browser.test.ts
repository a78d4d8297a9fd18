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
import { CHROMIUM, launch, passwordToMfa, step, VIRTUAL_AAGUID, virtualAuthenticator } from './browser-helpers.js';

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
    const params = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 'st',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    await page.goto(`${s.issuer}/authorize?${params}`);
    assert.match(page.url(), /\/login\?flow=flw_/);
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(`${redirectUri}?`)), page.click('#passkey-login').catch(() => undefined)]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'st');
    const tokens = (
      await s.post(
        '/token',
        { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: VERIFIER },
        { authorization: basic(web.client_id, web.client_secret) },
      )
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
    const params = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state: 'en',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    await page.goto(`${s.issuer}/authorize?${params}`);
    await page.fill('#email', user.email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(/\/mfa\/challenge\?flow=flw_/), page.click('form[action="/login"] button[type=submit]')]);
    await page.fill('#passkey-name', 'Enrolled at sign-in');
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(`${redirectUri}?`)), page.click('#passkey-enrol')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'en');
    const tokens = (
      await s.post(
        '/token',
        { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirectUri, code_verifier: VERIFIER },
        { authorization: basic(web.client_id, web.client_secret) },
      )
    ).json();
    const amr = decodeJwt(tokens.id_token).amr as string[];
    assert.equal(amr[0], 'pwd');
    assert.ok(amr.includes('hwk') || amr.includes('swk'), JSON.stringify(amr));
    assert.ok(amr.includes('mfa'));
    assert.deepEqual(
      (await api('GET', `/users/${user.id}/passkeys`)).json().data.map((p: { name: string }) => p.name),
      ['Enrolled at sign-in'],
    );
    await page.close();
  });

  it('a copy of a used passkey whose counter starts again at 0 is refused as a clone, audited, and the passkey disabled', { timeout: 120_000 }, async () => {
    const user = await s.createUser('clone-chromium@example.com');
    const api = v1(s, s.tenant.platformApiKey);
    const options = {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    } as const;
    /** A CDP WebAuthn.Credential: with its private key, so it can be copied to another authenticator. */
    type Credential = { credentialId: string; isResidentCredential: boolean; rpId?: string; privateKey: string; userHandle?: string; signCount: number };
    /**
     * A page of its own with a virtual authenticator holding `credential` (none: empty), and
     * without passkey autofill: the virtual authenticator answers an autofill (conditional
     * mediation) request at once, with no user to pick the passkey, so the page of a refused
     * sign-in, which starts one again, signed in again and again by itself until it was left
     * (one sign-in of the copy made ten assertions; reading that page or closing it then hung,
     * more often on PostgreSQL's slower answers). The button is the only request.
     */
    const authenticatorPage = async (credential?: Credential) => {
      const page = await step('new page', () => browser.context.newPage());
      await step('autofill off', () =>
        page.addInitScript('if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);'),
      );
      const cdp = await step('CDP session', () => browser.context.newCDPSession(page));
      await step('WebAuthn.enable', () => cdp.send('WebAuthn.enable'));
      const { authenticatorId } = await step('WebAuthn.addVirtualAuthenticator', () => cdp.send('WebAuthn.addVirtualAuthenticator', { options }));
      if (credential) await step('WebAuthn.addCredential', () => cdp.send('WebAuthn.addCredential', { authenticatorId, credential }));
      const stored = async () => (await step('WebAuthn.getCredentials', () => cdp.send('WebAuthn.getCredentials', { authenticatorId }))).credentials[0]!;
      return { page, stored };
    };
    const web = await s.webClient({ redirect_uris: [redirectUri] });
    const params = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    /** Signed out, signs in through /authorize with the passkey alone (one assertion): where it lands, and the authenticator's credential after. */
    const passkeySignIn = async (credential: Credential) => {
      await step('clear cookies', () => browser.context.clearCookies());
      const { page, stored } = await authenticatorPage(credential);
      await step('/authorize', () => page.goto(`${s.issuer}/authorize?${params}`));
      await step('passkey sign-in', () =>
        Promise.all([page.waitForURL((u) => u.toString().startsWith(`${redirectUri}?`) || u.pathname === '/login/passkey'), page.click('#passkey-login')]),
      );
      const landed = page.url().startsWith(redirectUri)
        ? 'signed in'
        : ((await step('read the refusal', () => page.locator('[role=alert]').textContent())) ?? '');
      const after = await stored();
      assert.equal(after.signCount, credential.signCount + 1, 'one assertion per sign-in');
      await step('close page', () => page.close());
      return { landed, after };
    };

    const registering = await authenticatorPage();
    await step('password to /mfa', () => passwordToMfa(registering.page, s.issuer, user.email));
    await step('register', () => Promise.all([registering.page.waitForSelector('[data-passkey]'), registering.page.click('#passkey-register')]));
    const registered = await registering.stored();
    await step('close page', () => registering.page.close());
    const first = await passkeySignIn(registered);
    assert.equal(first.landed, 'signed in', 'the original signs in');
    const original = first.after;
    assert.ok(original.signCount >= 1, `the original has signed: ${original.signCount}`);

    // The copy: the same key pair and credential id on another authenticator, counter reset to 0.
    const copy = await passkeySignIn({ ...original, signCount: 0 });
    assert.match(copy.landed, /counter went backwards/, 'the copy is refused');
    const regressed = (await api('GET', '/events?types=passkey.counter_regressed')).json().data;
    assert.equal(regressed.length, 1);
    assert.equal(regressed[0].data.user_id, user.id);
    assert.equal(regressed[0].data.stored_counter, original.signCount);
    assert.ok(regressed[0].data.presented_counter <= original.signCount);

    // Neither can be told from the original: the passkey is disabled, so the copy cannot step its
    // counter past the stored one by trying again, and the original is refused too.
    assert.match((await passkeySignIn(copy.after)).landed, /counter went backwards/, 'the copy, again');
    assert.match((await passkeySignIn({ ...original, signCount: original.signCount + 10 })).landed, /counter went backwards/, 'the original');
    assert.equal((await api('GET', '/events?types=passkey.counter_regressed')).json().data.length, 1, 'recorded once');
    const [listed] = (await api('GET', `/users/${user.id}/passkeys`)).json().data;
    assert.match(listed.disabled_at, /^\d{4}-/);
    // It still counts as the user's second factor (disabling it must not lower the bar to the
    // password alone); an administrator who removes it lets the user in to add a new one.
    await browser.context.clearCookies();
    const account = await browser.context.newPage();
    await account.goto(`${s.issuer}/login?return_to=%2Fmfa`);
    await account.fill('#email', user.email);
    await account.fill('#password', PASSWORD);
    await Promise.all([account.waitForURL(/\/mfa\/challenge/), account.click('form[action="/login"] button[type=submit]')]);
    assert.equal((await api('DELETE', `/users/${user.id}/passkeys/${listed.id}`)).status, 204);
    await browser.context.clearCookies();
    await passwordToMfa(account, s.issuer, user.email);
    await account.close();
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
