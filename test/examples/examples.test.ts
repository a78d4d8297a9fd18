/**
 * Every example of examples/ against `keyhall serve` (issue 34), each run from a fresh folder
 * where the packed SDK (`npm pack`) and its dependencies were installed: the webhook receiver,
 * the protected API, and the Express web app, the React single-page app and the MCP agent, whose
 * users sign in in Chromium.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { Browser } from 'playwright-core';
import { KeyhallClient } from '../../packages/sdk/src/index.js';
import { signWebhook } from '../../src/webhooks/signer.js';
import { launchChromium, noBrowser, signInOnKeyhall } from '../guides/browser.js';
import { freePort, type Keyhall, type Running, startKeyhall } from '../guides/guide.js';
import { installExample, packSdk, startExample } from './kit.js';

describe('examples/, installed with the packed SDK, against keyhall serve', () => {
  let k: Keyhall;
  let api: KeyhallClient;
  const running: Running[] = [];
  /** Each example's folder, installed while Keyhall starts (those on the SDK once it is packed). */
  const installed = new Map<string, Promise<string>>();
  before(async () => {
    const tarball = packSdk();
    for (const name of ['webhook-receiver', 'protected-api'])
      installed.set(
        name,
        tarball.then((t) => installExample(name, t)),
      );
    // The browser ones only where Chromium is.
    if (!noBrowser) for (const name of ['express-web-app', 'mcp-agent', 'react-spa', 'device-cli']) installed.set(name, installExample(name));
    // Settled here, so a failed install fails its test, not the others.
    for (const p of installed.values()) p.catch(() => undefined);
    // The webhook receiver listens on loopback: the egress policy allows it (docs/guides/webhooks.md).
    k = await startKeyhall({ KEYHALL_EGRESS_ALLOW: '127.0.0.1/32' });
    api = new KeyhallClient({ baseUrl: k.issuer, apiKey: k.apiKey });
  });
  after(async () => {
    for (const r of running) await r.stop();
    await k?.close();
  });
  const start = (...args: Parameters<typeof startExample>) => {
    const r = startExample(...args);
    running.push(r);
    return r;
  };

  describe('webhook-receiver', () => {
    it('verifies deliveries from Keyhall, handles a repeated webhook-id once, refuses a forged one', async () => {
      const dir = await installed.get('webhook-receiver')!;
      const port = await freePort();
      const org = await api.post('/v1/organizations', { body: { name: 'Receivers' } });
      const endpoint = await api.post('/v1/organizations/{orgId}/webhooks', {
        path: { orgId: org.id },
        body: { url: `http://127.0.0.1:${port}/webhooks`, events: ['member.added'] },
      });
      const receiver = start(dir, 'receiver.ts', { WEBHOOK_SECRET: endpoint.secret, PORT: String(port) });
      await receiver.waitFor(/Receiving webhooks on http:\/\/127\.0\.0\.1:\d+\/webhooks/);

      const ping = await api.post('/v1/organizations/{orgId}/webhooks/{webhookId}/ping', { path: { orgId: org.id, webhookId: endpoint.endpoint_id } });
      await receiver.waitFor(new RegExp(`verified ping ${ping.event_id} \\(whd_\\w+\\): \\{"endpoint_id":"${endpoint.endpoint_id}"\\}`));
      const user = await api.post('/v1/users', { body: { email: 'grace@example.com' } });
      await api.post('/v1/organizations/{orgId}/members', { path: { orgId: org.id }, body: { user_id: user.id } });
      await receiver.waitFor(
        new RegExp(
          `verified member\\.added evt_\\w+ \\(whd_\\w+\\): \\{"organization_id":"${org.id}","user_id":"${user.id}","role":"member","roles":\\["member"\\]\\}`,
        ),
      );

      // A retry of the ping delivery (same webhook-id, fresh timestamp) is acknowledged and ignored.
      const webhookId = /verified ping \S+ \((whd_\w+)\)/.exec(receiver.output())![1]!;
      const body = JSON.stringify({
        id: ping.event_id,
        type: 'ping',
        created: Math.floor(Date.now() / 1000),
        organization_id: org.id,
        data: { endpoint_id: endpoint.endpoint_id },
      });
      const post = (signature: string) =>
        fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'webhook-id': webhookId, 'webhook-signature': signature },
          body,
        });
      assert.equal((await post(signWebhook(endpoint.secret, body, Math.floor(Date.now() / 1000)))).status, 204);
      await receiver.waitFor(new RegExp(`duplicate ${webhookId} ignored`));
      assert.equal((await post(signWebhook('whsec_forged', body, Math.floor(Date.now() / 1000)))).status, 400);
      await receiver.waitFor(/refused: no_matching_signature/);
      assert.equal((await post(signWebhook(endpoint.secret, body, Math.floor(Date.now() / 1000) - 600))).status, 400);
      await receiver.waitFor(/refused: timestamp_out_of_tolerance/);
      assert.equal(receiver.output().match(/verified ping/g)?.length, 1);
    });
  });

  describe('protected-api', () => {
    const REPORTS = 'https://reports.example.com';

    it('401 without a token, 200 with one, 403 without the route’s scope, and DPoP-bound tokens with their proof', async () => {
      const dir = await installed.get('protected-api')!;
      await api.post('/v1/resource_servers', { body: { name: 'Reports API', identifier: REPORTS, scopes: ['reports:read', 'reports:write'] } });
      const body = { grant_types: ['client_credentials' as const], scope: 'reports:read', allowed_resources: [REPORTS] };
      const reader = await api.post('/v1/clients', { body: { client_name: 'Reader', ...body } });
      const bound = await api.post('/v1/clients', { body: { client_name: 'Bound reader', ...body, dpop_bound_access_tokens: true } });
      const port = await freePort();
      const url = `http://localhost:${port}/reports`;
      const server = start(dir, 'api.ts', { KEYHALL_ISSUER: k.issuer, PORT: String(port) });
      await server.waitFor(/Reports API on http:\/\/localhost:\d+\/reports/);

      const pair = await generateKeyPair('ES256', { extractable: true });
      const jwk: JWK = await exportJWK(pair.publicKey);
      const proof = (htm: string, htu: string, accessToken?: string) =>
        new SignJWT({
          htm,
          htu,
          jti: crypto.randomUUID(),
          iat: Math.floor(Date.now() / 1000),
          ...(accessToken ? { ath: createHash('sha256').update(accessToken).digest('base64url') } : {}),
        })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
          .sign(pair.privateKey);
      async function token(c: { client_id: string; client_secret?: string | null }, dpop: boolean): Promise<string> {
        const res = await fetch(`${k.issuer}/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`,
            ...(dpop ? { dpop: await proof('POST', `${k.issuer}/token`) } : {}),
          },
          body: new URLSearchParams({ grant_type: 'client_credentials', resource: REPORTS, scope: 'reports:read' }),
        });
        assert.equal(res.status, 200);
        return ((await res.json()) as { access_token: string }).access_token;
      }

      const none = await fetch(url);
      assert.deepEqual([none.status, none.headers.get('www-authenticate'), await none.json()], [401, 'Bearer', { error: 'token_required' }]);
      const at = await token(reader, false);
      const ok = await fetch(url, { headers: { authorization: `Bearer ${at}` } });
      assert.deepEqual([ok.status, await ok.json()], [200, { reports: [{ id: 'r1', title: 'Daily sign-ups' }], caller: reader.client_id }]);
      const write = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${at}` } });
      assert.deepEqual(
        [write.status, write.headers.get('www-authenticate'), ((await write.json()) as { error: string }).error],
        [403, 'Bearer error="insufficient_scope" scope="reports:write"', 'insufficient_scope'],
      );
      const forged = await fetch(url, { headers: { authorization: `Bearer ${at.slice(0, -4)}AAAA` } });
      assert.deepEqual([forged.status, ((await forged.json()) as { error: string }).error], [401, 'invalid_token']);

      const boundAt = await token(bound, true);
      const dpopOk = await fetch(url, { headers: { authorization: `DPoP ${boundAt}`, dpop: await proof('GET', url, boundAt) } });
      assert.deepEqual([dpopOk.status, ((await dpopOk.json()) as { caller: string }).caller], [200, bound.client_id]);
      const asBearer = await fetch(url, { headers: { authorization: `Bearer ${boundAt}` } });
      assert.equal(asBearer.status, 401);
      assert.match(asBearer.headers.get('www-authenticate')!, /^DPoP error="invalid_token"/);
      const noProof = await fetch(url, { headers: { authorization: `DPoP ${boundAt}` } });
      assert.deepEqual([noProof.status, ((await noProof.json()) as { error: string }).error], [401, 'invalid_dpop_proof']);
    });
  });

  describe('express-web-app', { skip: noBrowser }, () => {
    let browser: Browser | undefined;
    after(() => browser?.close());

    it('signs a user in (PKCE), refreshes the access token, and signs out at Keyhall too', async () => {
      const dir = await installed.get('express-web-app')!;
      const port = await freePort();
      const appUrl = `http://localhost:${port}`;
      const c = await api.post('/v1/clients', {
        body: {
          client_name: 'Example web app',
          redirect_uris: [`${appUrl}/callback`],
          post_logout_redirect_uris: [`${appUrl}/`],
          grant_types: ['authorization_code', 'refresh_token'],
        },
      });
      await api.post('/v1/users', { body: { email: 'ada@example.com', name: 'Ada Lovelace', password: 'correct horse battery staple' } });
      const app = start(dir, 'app.ts', { CLIENT_ID: c.client_id, CLIENT_SECRET: c.client_secret!, KEYHALL_ISSUER: k.issuer, PORT: String(port) });
      await app.waitFor(/Web app on http:\/\/localhost:\d+/);

      browser = await launchChromium();
      const page = await browser.newPage();
      await page.goto(`${appUrl}/`);
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.waitForURL(`${k.issuer}/login**`);
      await signInOnKeyhall(page, 'ada@example.com', 'correct horse battery staple');
      await page.waitForURL(`${appUrl}/`);
      await page.getByRole('heading', { name: 'Hello, ada@example.com' }).waitFor();

      const first = await page.locator('#access-token').textContent();
      await page.getByRole('button', { name: 'Refresh the access token' }).click();
      await page.waitForURL(`${appUrl}/`);
      await page.getByRole('heading', { name: 'Hello, ada@example.com' }).waitFor();
      assert.notEqual(await page.locator('#access-token').textContent(), first, 'a new access token');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${k.issuer}/logout**`);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${appUrl}/`);
      await page.getByRole('heading', { name: 'Welcome' }).waitFor();
      // Keyhall's session ended too: signing in again asks for the password.
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.waitForURL(`${k.issuer}/login**`);
      await page.getByLabel('Password', { exact: true }).waitFor();
    });
  });
  describe('mcp-agent', { skip: noBrowser }, () => {
    let browser: Browser | undefined;
    after(() => browser?.close());

    it('registers itself, has the user sign in with PKCE on a loopback redirect, and calls tools as that user', async () => {
      const dir = await installed.get('mcp-agent')!;
      await api.post('/v1/resource_servers', {
        body: { name: 'MCP', identifier: `${k.issuer}/mcp`, scopes: ['mcp:read', 'mcp:connected_accounts', 'mcp:credentials'] },
      });
      await api.put('/v1/mcp/settings', { body: { client_registration: 'open' } });
      const user = await api.post('/v1/users', { body: { email: 'lin@example.com', name: 'Lin', password: 'correct horse battery staple' } });
      const org = await api.post('/v1/organizations', { body: { name: 'Agents Inc' } });
      await api.post('/v1/organizations/{orgId}/members', { path: { orgId: org.id }, body: { user_id: user.id } });

      const agent = start(dir, 'agent.ts', { KEYHALL_ISSUER: k.issuer, PORT: String(await freePort()) });
      await agent.waitFor(/Sign in: \S+/);
      const signIn = new URL(/Sign in: (\S+)/.exec(agent.output())![1]!);
      assert.equal(`${signIn.origin}${signIn.pathname}`, `${k.issuer}/authorize`);
      assert.equal(signIn.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(signIn.searchParams.get('resource'), `${k.issuer}/mcp`);
      assert.match(signIn.searchParams.get('client_id')!, /^cli_/);

      browser = await launchChromium();
      const page = await browser.newPage();
      await page.goto(signIn.href);
      await signInOnKeyhall(page, 'lin@example.com', 'correct horse battery staple');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByText('Signed in: you can close this tab.').waitFor();

      await agent.waitFor(/organizations: .*/);
      assert.match(agent.output(), /tools: .*\blist_organizations\b.*\bwhoami\b/);
      const whoami = JSON.parse(/whoami: (.*)/.exec(agent.output())![1]!) as Record<string, unknown>;
      assert.deepEqual([whoami.user_id, whoami.email, whoami.client_id], [user.id, 'lin@example.com', signIn.searchParams.get('client_id')]);
      assert.ok(agent.output().includes(org.id), agent.output());
    });
  });
  describe('device-cli', { skip: noBrowser }, () => {
    let browser: Browser | undefined;
    after(() => browser?.close());

    it('prints the code to type at /activate, polls while the user signs in and allows it, then reads /userinfo', async () => {
      const dir = await installed.get('device-cli')!;
      const c = await api.post('/v1/clients', {
        body: {
          client_name: 'Example CLI',
          token_endpoint_auth_method: 'none',
          grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        },
      });
      await api.post('/v1/users', { body: { email: 'alan@example.com', name: 'Alan Turing', password: 'correct horse battery staple' } });

      const cli = start(dir, 'cli.ts', { KEYHALL_ISSUER: k.issuer, CLIENT_ID: c.client_id });
      await cli.waitFor(/Or open \S+/);
      const [, address, userCode] = /open (\S+) and enter the code ([B-Z]{4}-[B-Z]{4})/.exec(cli.output())!;
      assert.equal(address, `${k.issuer}/activate`);
      const complete = new URL(/Or open (\S+)/.exec(cli.output())![1]!);
      assert.equal(complete.searchParams.get('user_code'), userCode);

      browser = await launchChromium();
      const page = await browser.newPage();
      await page.goto(complete.href);
      // The code is filled in from the address; the user confirms it, signs in, and allows.
      await page.getByRole('button', { name: 'Continue' }).click();
      await signInOnKeyhall(page, 'alan@example.com', 'correct horse battery staple');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByText('Done. Return to your device: it is now connected.').waitFor();

      await cli.waitFor(/Signed in as .*/);
      assert.match(cli.output(), /Signed in as alan@example\.com \(refresh token: yes\)/);
    });
  });
  describe('react-spa', { skip: noBrowser }, () => {
    let browser: Browser | undefined;
    after(() => browser?.close());

    it('signs in with PKCE as a public client and reads /userinfo across origins (CORS), the code leaving the address bar', async () => {
      const dir = await installed.get('react-spa')!;
      const port = await freePort();
      const origin = `http://localhost:${port}`;
      const c = await api.post('/v1/clients', {
        body: {
          client_name: 'React app',
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
          redirect_uris: [`${origin}/callback`],
          allowed_origins: [origin],
        },
      });
      const user = await api.post('/v1/users', { body: { email: 'joan@example.com', name: 'Joan Clarke', password: 'correct horse battery staple' } });
      const app = start(dir, 'server.ts', { CLIENT_ID: c.client_id, KEYHALL_ISSUER: k.issuer, PORT: String(port) });
      await app.waitFor(/React app on http:\/\/localhost:\d+/);

      browser = await launchChromium();
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(String(e)));
      const crossOrigin: Array<{ url: string; method: string; origin?: string; allowOrigin?: string }> = [];
      page.on('response', async (r) => {
        if (!r.url().startsWith(k.issuer) || !['/token', '/userinfo'].includes(new URL(r.url()).pathname)) return;
        crossOrigin.push({
          url: new URL(r.url()).pathname,
          method: r.request().method(),
          origin: (await r.request().headerValue('origin')) ?? undefined,
          allowOrigin: (await r.headerValue('access-control-allow-origin')) ?? undefined,
        });
      });
      const authorize: URL[] = [];
      page.on('request', (r) => {
        if (r.url().startsWith(`${k.issuer}/authorize`)) authorize.push(new URL(r.url()));
      });

      await page.goto(`${origin}/`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${k.issuer}/login**`);
      await signInOnKeyhall(page, 'joan@example.com', 'correct horse battery staple');
      await page
        .getByRole('heading', { name: 'Signed in as joan@example.com' })
        .waitFor({ timeout: 15_000 })
        .catch(async (err) => {
          throw new Error(`${String(err)}; page: ${await page.locator('h1').textContent()}; ${problems.join('; ')}`);
        });
      assert.equal(page.url(), `${origin}/`);
      const claims = JSON.parse((await page.locator('#claims').textContent())!) as Record<string, unknown>;
      assert.deepEqual([claims.sub, claims.email, claims.name], [user.id, 'joan@example.com', 'Joan Clarke']);
      assert.equal(authorize[0]!.searchParams.get('code_challenge_method'), 'S256');
      const calls = crossOrigin.filter((x) => x.method !== 'OPTIONS');
      assert.deepEqual(
        calls.map((x) => [x.url, x.method, x.origin, x.allowOrigin]),
        [
          ['/token', 'POST', origin, origin],
          ['/userinfo', 'GET', origin, origin],
        ],
      );
      assert.deepEqual(problems, []);
      await page.getByRole('button', { name: 'Forget me' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
    });
  });
});
