/**
 * The device grant end to end (RFC 8628, docs/device-grant.md): oauth4webapi plays the device
 * (device authorization request, then polling /token) while Chromium, driven by playwright-core,
 * opens verification_uri_complete, confirms the prefilled code, signs in and approves. Time on the
 * server moves by the injected clock (one interval per poll), so the test does not sleep.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { ManualClock } from '../../src/kernel/clock.js';
import { CHROMIUM, launch, step } from '../mfa/browser-helpers.js';
import { insecure } from '../oauth/helpers.js';
import { PASSWORD, type SigninTestServer, startSigninServer } from './helpers.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';

describe('device grant: an independent client polls while Chromium approves', { skip }, () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  let browser: Awaited<ReturnType<typeof launch>>;
  before(async () => {
    s = await startSigninServer({ clock, config: { deviceCodeTtlSeconds: 3600 } });
    await s.createUser('device@example.com');
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('the person enters the code, signs in, sees the client and scopes, allows; the device gets its tokens', async () => {
    const c = await s.createClient({ token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT], client_name: 'Living room TV' });
    const client: oauth.Client = { client_id: c.client_id, token_endpoint_auth_method: 'none' };
    const d = await oauth.processDeviceAuthorizationResponse(
      s.as,
      client,
      await oauth.deviceAuthorizationRequest(s.as, client, oauth.None(), { scope: 'openid profile' }, insecure),
    );

    // The device polls, one interval of server time per poll, until the tokens come.
    const answers: string[] = [];
    let approved = false;
    const polling = (async () => {
      for (let i = 0; i < 200; i++) {
        clock.advance((d.interval ?? 5) * 1000);
        const response = await oauth.deviceCodeGrantRequest(s.as, client, oauth.None(), d.device_code, insecure);
        // The client's own notion of now follows the server's injected clock (for the ID token's iat).
        client[oauth.clockSkew] = Math.round((clock.now() - Date.now()) / 1000);
        try {
          return await oauth.processDeviceCodeResponse(s.as, client, response);
        } catch (err) {
          if (!(err instanceof oauth.ResponseBodyError)) throw err;
          answers.push(err.error);
          if (err.error !== 'authorization_pending') throw err;
          if (approved) throw new Error('still pending after the approval');
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('no tokens after 200 polls');
    })();

    const page = await browser.context.newPage();
    await step('open verification_uri_complete', () => page.goto(d.verification_uri_complete!));
    assert.equal(await page.inputValue('#user_code'), d.user_code, 'the code is prefilled');
    assert.ok(answers.every((a) => a === 'authorization_pending'));
    await step('confirm the code', () => Promise.all([page.waitForURL(/\/login\?flow=flw_/), page.click('form[action="/activate"] button[type=submit]')]));
    await page.fill('#email', 'device@example.com');
    await page.fill('#password', PASSWORD);
    await step('sign in', () => Promise.all([page.waitForURL(/\/activate\/confirm\?flow=flw_/), page.click('form[action="/login"] button[type=submit]')]));
    assert.equal(await page.textContent('h1'), 'Living room TV on your device wants to access your account');
    const scopes = await page.locator('li').allTextContents();
    assert.equal(scopes.length, 2, scopes.join(' | '));
    await step('allow', () => Promise.all([page.waitForSelector('#device-result[data-approved="true"]'), page.click('#allow')]));
    approved = true;

    const tokens = await step('the device gets its tokens', () => polling);
    assert.ok(answers.length > 0 && answers.every((a) => a === 'authorization_pending'), answers.join(','));
    assert.equal(tokens.scope, 'openid profile');
    const jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    const { payload } = await jwtVerify(tokens.id_token!, jwks, { issuer: s.issuer, audience: client.client_id, currentDate: new Date(clock.now()) });
    assert.equal(payload.name, 'Ada Lovelace');
    assert.deepEqual(payload.amr, ['pwd']);
    const at = await s.verifyAt(tokens.access_token);
    assert.equal(at.sub, payload.sub);
    await page.close();
  });
});
