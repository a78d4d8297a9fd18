/**
 * Social sign-in in a real browser: Debian chromium (playwright-core) clicks "Continue with
 * GitHub" on the hosted login, the GitHub-like stand-in approves, and the application gets its
 * code. Skipped (and said so) only when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { CHROMIUM, launch, step } from '../mfa/browser-helpers.js';
import { S256, VERIFIER } from '../signin/helpers.js';
import { type SsoTestServer, startSsoServer } from '../sso/helpers.js';
import { GithubStandIn } from './stand-ins.js';

const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';

describe('social sign-in in a real browser (chromium)', { skip }, () => {
  let s: SsoTestServer;
  let gh: GithubStandIn;
  let browser: Awaited<ReturnType<typeof launch>>;
  let app: http.Server;
  let redirectUri: string;

  before(async () => {
    s = await startSsoServer();
    gh = await GithubStandIn.start();
    app = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app callback'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(app.address() as { port: number }).port}/cb`;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
    await gh?.close();
    app?.close();
  });

  it('clicks "Continue with GitHub", the provider approves, the application gets a code whose ID token names the connection', async () => {
    const conn = (await s.api('POST', '/social_connections', gh.connection())).json();
    gh.people.set('octocat', { id: 7, login: 'octocat', name: 'Mona', avatar: '', emails: [{ email: 'mona@example.com', primary: true, verified: true }] });
    gh.autoApprove = 'octocat';
    const client = await s.publicClient({ redirect_uris: [redirectUri] });
    const params = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid email profile',
      state: 'st',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    const page = await browser.context.newPage();
    await step('/authorize', () => page.goto(`${s.issuer}/authorize?${params}`));
    const button = page.locator(`#social-${conn.id}`);
    assert.equal((await button.textContent())?.trim(), 'Continue with GitHub');
    await step('button', () => Promise.all([page.waitForURL((u) => u.href.startsWith(redirectUri)), button.click()]));
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('state'), 'st');
    const tokens = await s.post('/token', {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: redirectUri,
      client_id: client.client_id,
      code_verifier: VERIFIER,
    });
    assert.equal(tokens.status, 200, tokens.text);
    const id = decodeJwt(tokens.json().id_token);
    assert.equal(id.idp, conn.id);
    assert.equal(id.email, 'mona@example.com');
    await page.close();
  });
});
