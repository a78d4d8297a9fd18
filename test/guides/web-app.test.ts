/** docs/guides/web-app.md, run as written against `keyhall serve`, signed in with Chromium (issue 27, item 11). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, noBrowser, signInOnKeyhall } from './browser.js';
import { freePort, Guide, type Keyhall, type Running, startKeyhall } from './guide.js';

describe('guide: sign users into a web app (openid-client, Express)', { skip: noBrowser }, () => {
  const guide = new Guide('web-app');
  let k: Keyhall;
  let app: Running | undefined;
  let browser: Browser | undefined;
  before(async () => {
    k = await startKeyhall();
    guide.addresses.set('localhost:3000', k.host);
  });
  after(async () => {
    await browser?.close();
    await app?.stop();
    await k?.close();
  });

  it('shows its code as it is', () => {
    assert.deepEqual(guide.assertFilesShown(), ['docs/guides/web-app/app.ts']);
  });

  it('a user signs in on the hosted page and the app greets them with their ID token', async () => {
    const port = await freePort();
    guide.addresses.set('localhost:8000', `localhost:${port}`);
    const env = { KEYHALL_API_KEY: k.apiKey };
    const c = await guide.json('create-client', env);
    assert.deepEqual(c.redirect_uris, [`http://localhost:${port}/callback`]);
    const user = await guide.json('create-user', env);
    assert.equal(user.has_password, true);

    app = guide.start('start-app', { CLIENT_ID: c.client_id, CLIENT_SECRET: c.client_secret, KEYHALL_ISSUER: k.issuer, PORT: String(port) });
    await app.waitFor(/Web app on http:\/\/localhost:\d+/);

    browser = await launchChromium();
    const page = await browser.newPage();
    const authorize: URL[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${k.issuer}/authorize`)) authorize.push(new URL(r.url()));
    });
    await page.goto(`http://localhost:${port}/`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.waitForURL(`${k.issuer}/login**`);
    await signInOnKeyhall(page, 'ada@example.com', 'correct horse battery staple');
    await page.waitForURL(`http://localhost:${port}/`);
    await page.getByRole('heading', { name: 'Hello, ada@example.com' }).waitFor();

    const claims = JSON.parse((await page.locator('pre').textContent())!) as Record<string, unknown>;
    assert.deepEqual(
      { iss: claims.iss, aud: claims.aud, sub: claims.sub, email: claims.email, name: claims.name },
      { iss: k.issuer, aud: c.client_id, sub: user.id, email: 'ada@example.com', name: 'Ada Lovelace' },
    );
    const q = authorize[0]!.searchParams;
    assert.deepEqual([q.get('code_challenge_method'), q.get('scope')], ['S256', 'openid email profile']);
    assert.ok(q.get('state') && q.get('nonce'), 'state and nonce sent');
  });
});
