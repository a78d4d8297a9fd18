/**
 * A single-page app in a real browser (chromium via playwright-core) calls /token and /userinfo
 * with fetch() from its own origin: allowed when a client lists the origin, blocked by the
 * browser otherwise (issue 12, item 10). Skipped only when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser as Chromium, chromium, type Page } from 'playwright-core';
import { REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from './helpers.js';

const CHROMIUM = process.env.KEYHALL_TEST_CHROMIUM ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';

/** A loopback web server that serves one blank page: the single-page app's origin. */
async function spaServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>spa</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface FetchOutcome {
  ok: boolean;
  status?: number;
  body?: Record<string, unknown>;
  error?: string;
}

/** Runs fetch() inside the page (so the browser enforces CORS) and reports what the page saw. */
function pageFetch(page: Page, url: string, init: { method: string; headers?: Record<string, string>; body?: string }): Promise<FetchOutcome> {
  return page.evaluate(
    async ([u, i]) => {
      try {
        const r = await fetch(u, i);
        return { ok: true, status: r.status, body: (await r.json()) as Record<string, unknown> };
      } catch (err) {
        return { ok: false, error: String(err) };
      }
    },
    [url, init] as const,
  );
}

describe('a browser app calls /token from its origin (chromium)', { skip }, () => {
  let s: SigninTestServer;
  let browser: Chromium;
  let allowed: Awaited<ReturnType<typeof spaServer>>;
  let foreign: Awaited<ReturnType<typeof spaServer>>;
  let clientId: string;
  let email: string;
  before(async () => {
    s = await startSigninServer();
    allowed = await spaServer();
    foreign = await spaServer();
    email = (await s.createUser('spa-browser@example.com')).email;
    clientId = (await s.publicClient({ allowed_origins: [allowed.origin] })).client_id;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    });
  });
  after(async () => {
    await browser?.close();
    await allowed?.close();
    await foreign?.close();
    await s?.close();
  });

  async function code(): Promise<string> {
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid offline_access',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    const b = s.browser();
    const cb = await signIn(b, (await b.get(`/authorize?${params}`)).headers.location!, email);
    return new URL(cb.headers.location!).searchParams.get('code')!;
  }
  const form = async () =>
    new URLSearchParams({
      grant_type: 'authorization_code',
      code: await code(),
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
      client_id: clientId,
    }).toString();

  it('the registered origin redeems a code with PKCE, refreshes, and reads /userinfo (a preflighted request)', async () => {
    const page = await browser.newPage();
    await page.goto(`${allowed.origin}/`);
    const tokens = await pageFetch(page, `${s.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: await form(),
    });
    assert.equal(tokens.ok, true, tokens.error);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(typeof tokens.body!.access_token, 'string');

    const refreshed = await pageFetch(page, `${s.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(tokens.body!.refresh_token), client_id: clientId }).toString(),
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed));

    // An Authorization header makes the browser send a preflight first.
    const info = await pageFetch(page, `${s.issuer}/userinfo`, { method: 'GET', headers: { authorization: `Bearer ${String(refreshed.body!.access_token)}` } });
    assert.equal(info.ok, true, info.error);
    assert.equal(info.status, 200);
    assert.ok(info.body!.sub);
    await page.close();
  });

  it('another origin is blocked by the browser', async () => {
    const page = await browser.newPage();
    await page.goto(`${foreign.origin}/`);
    const r = await pageFetch(page, `${s.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: await form(),
    });
    assert.equal(r.ok, false, `the page read ${JSON.stringify(r.body)}`);
    assert.match(r.error ?? '', /TypeError|Failed to fetch/);
    const info = await pageFetch(page, `${s.issuer}/userinfo`, { method: 'GET', headers: { authorization: 'Bearer x' } });
    assert.equal(info.ok, false, 'the preflight is not answered for this origin');
    await page.close();
  });
});
