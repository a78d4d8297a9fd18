/** docs/guides/spa.md, run as written against `keyhall serve`, signed in with Chromium (issue 27, item 11). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, noBrowser, signInOnKeyhall } from './browser.js';
import { freePort, Guide, type Keyhall, type Running, startKeyhall } from './guide.js';

/** The status and headers of `curl -i`'s output. */
function head(out: string): { status: number; headers: Map<string, string> } {
  const lines = out.split(/\r\n\r\n/)[0]!.split('\r\n');
  const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]));
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(lines[0]!)?.[1]), headers };
}

describe('guide: a single-page app (oauth4webapi, PKCE, CORS)', { skip: noBrowser }, () => {
  const guide = new Guide('spa');
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
    assert.deepEqual(guide.assertFilesShown(), ['docs/guides/spa/index.html', 'docs/guides/spa/app.js', 'docs/guides/spa/server.ts']);
  });

  it('answers the preflight for the listed origin, and the page signs in with PKCE and reads /userinfo across origins', async () => {
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    guide.addresses.set('localhost:5173', `localhost:${port}`);
    const env = { KEYHALL_API_KEY: k.apiKey };
    const c = await guide.json('create-client', env);
    assert.deepEqual([c.token_endpoint_auth_method, c.client_secret, c.allowed_origins], ['none', undefined, [origin]]);
    const user = await guide.json('create-user', env);

    const preflight = head(await guide.sh('preflight', {}));
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), origin);
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'POST');

    app = guide.start('start-app', { CLIENT_ID: c.client_id, KEYHALL_ISSUER: k.issuer, PORT: String(port) });
    await app.waitFor(/Single-page app on http:\/\/localhost:\d+/);

    browser = await launchChromium();
    const page = await browser.newPage();
    const problems: string[] = [];
    // Errors the page logs (a CORS refusal among them) and failed loads; a browser's own favicon
    // request is not the app's.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
    });
    page.on('requestfinished', async (r) => {
      const status = (await r.response())?.status() ?? 0;
      if (status >= 400 && new URL(r.url()).pathname !== '/favicon.ico') problems.push(`${status} ${r.url()}`);
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    const authorize: URL[] = [];
    const token: Array<{ origin?: string; body: URLSearchParams; allowOrigin?: string }> = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${k.issuer}/authorize`)) authorize.push(new URL(r.url()));
    });
    page.on('response', async (r) => {
      if (r.url() !== `${k.issuer}/token` || r.request().method() !== 'POST') return;
      const req = r.request();
      token.push({
        origin: (await req.headerValue('origin')) ?? undefined,
        body: new URLSearchParams(req.postData() ?? ''),
        allowOrigin: (await r.headerValue('access-control-allow-origin')) ?? undefined,
      });
    });

    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${k.issuer}/login**`);
    await signInOnKeyhall(page, 'ada@example.com', 'correct horse battery staple');
    await page
      .getByRole('heading', { name: 'Signed in as ada@example.com' })
      .waitFor({ timeout: 15_000 })
      .catch(async (err) => {
        throw new Error(`${String(err)}; page says ${await page.locator('#greeting').textContent()}; ${problems.join('; ')}`);
      });
    assert.equal(page.url(), `${origin}/`, 'the spent code left the address bar');
    const claims = JSON.parse((await page.locator('#claims').textContent())!) as Record<string, unknown>;
    assert.deepEqual({ sub: claims.sub, email: claims.email }, { sub: user.id, email: 'ada@example.com' });

    const q = authorize[0]!.searchParams;
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[\w-]{43}$/);
    assert.equal(token.length, 1);
    assert.equal(token[0]!.origin, origin);
    assert.match(token[0]!.body.get('code_verifier') ?? '', /^[\w-]{43,128}$/);
    assert.equal(token[0]!.allowOrigin, origin);
    assert.deepEqual(problems, []);
  });
});
