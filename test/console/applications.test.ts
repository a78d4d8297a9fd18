import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { setupLink } from '../../src/console/service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';
import { accessible, buildConsole, consolePage, noHorizontalScroll, shot } from './browser-helpers.js';
import { ConsoleClient, PASSWORD } from './helpers.js';

const ADMIN = 'apps@console.test';
const skip = !existsSync(CHROMIUM) && 'no Chromium at /usr/bin/chromium';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

// Applications (docs/console.md): an OAuth client's settings through PATCH /clients/{id}, its
// secret rotated (shown once), its authentication method and keys (private_key_jwt), a resource
// server's scopes through PATCH /resource_servers/{id}.
describe('console applications: edit a client, rotate its secret, its keys, edit an API', () => {
  let s: TestServer;
  let browser: Browser | undefined;
  let page: Page;
  const cspViolations: string[] = [];
  const v1 = (method: string, path: string, body?: unknown) =>
    s.request({
      method,
      path,
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  const clientCredentials = (id: string, secret: string) =>
    s.request({
      method: 'POST',
      path: '/token',
      headers: { authorization: basic(id, secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
  const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    s.request({
      method: 'POST',
      path: '/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body).toString(),
    });
  let clientId = '';
  let firstSecret = '';
  let rotatedSecret = '';

  before(async () => {
    buildConsole();
    // keys.example resolves to a public address, so a jwks_uri is judged by the egress rules, not DNS.
    s = await startTestServer({ egressResolver: async () => [{ address: '93.184.215.14', family: 4 }] });
    if (skip) return;
    ({ browser, page } = await consolePage(cspViolations));
    await page.goto(setupLink(s.tenant.tenant.issuer, s.tenant.setupToken));
    await page.getByLabel('Email').fill(ADMIN);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByRole('link', { name: 'Skip for now and open the console' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Applications', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('edits a client: redirect and post-logout URIs, CORS origins, grants, token exchange, PAR; a refused value shows the API error', { skip }, async () => {
    await page.getByLabel('Name', { exact: true }).first().fill('Billing');
    await page.getByLabel('Redirect URIs (one per line; not for machine to machine)').fill('https://billing.example/cb');
    await page.getByRole('button', { name: 'Register client' }).click();
    const secretBox = page.getByRole('textbox', { name: /^Client secret of cli_/ });
    await secretBox.waitFor();
    firstSecret = await secretBox.inputValue();
    clientId = (await page.locator('td code').first().textContent())!;
    await page.getByRole('button', { name: 'I have stored it' }).click();

    await page.getByRole('button', { name: 'Edit Billing' }).click();
    const editor = page.locator('#client-edit');
    await page.getByRole('heading', { level: 3, name: 'Edit Billing' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Edit Billing' }).getAttribute('aria-expanded'), 'true');
    await editor.getByLabel('Redirect URIs (one per line)', { exact: true }).fill('https://billing.example/cb\nhttps://billing.example/cb2');
    await editor.getByLabel('Post-logout redirect URIs (one per line)').fill('https://billing.example/bye');
    await editor.getByLabel(/Allowed browser origins/).fill('https://billing.example/not-an-origin');
    await editor.getByRole('button', { name: 'Save changes' }).click();
    await editor.getByRole('alert').filter({ hasText: 'allowed_origins' }).waitFor();
    assert.deepEqual((await v1('GET', `/v1/clients/${clientId}`)).json().allowed_origins, [], 'nothing saved');

    await editor.getByLabel(/Allowed browser origins/).fill('https://billing.example');
    await editor.getByLabel('Client credentials (machine to machine)').check();
    await editor.getByLabel('Token exchange (RFC 8693)').check();
    await editor.getByLabel(/Subject clients/).fill('*');
    await editor.getByLabel('Audiences it may obtain (one per line)').fill('https://orders.example');
    await editor.getByLabel('Require pushed authorization requests (PAR)').check();
    await editor.getByLabel('Allowed scopes (space-separated; empty: no restriction)').fill('openid read:orders');
    await shot(page, '30-applications-edit-client');
    await accessible(page, 'applications: edit a client');
    await editor.getByRole('button', { name: 'Save changes' }).click();
    await editor.getByText('Saved.').waitFor();

    const c = (await v1('GET', `/v1/clients/${clientId}`)).json();
    assert.deepEqual(c.redirect_uris, ['https://billing.example/cb', 'https://billing.example/cb2']);
    assert.deepEqual(c.post_logout_redirect_uris, ['https://billing.example/bye']);
    assert.deepEqual(c.allowed_origins, ['https://billing.example']);
    assert.deepEqual([...c.grant_types].sort(), [
      'authorization_code',
      'client_credentials',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    assert.deepEqual(c.token_exchange, { subject_clients: ['*'], audiences: ['https://orders.example'] });
    assert.equal(c.require_pushed_authorization_requests, true);
    assert.equal(c.scope, 'openid read:orders');
    const updated = (await v1('GET', '/v1/events?types=client.updated')).json().data as Array<{ actor: { type: string } }>;
    assert.equal(updated[0]?.actor.type, 'user');
    await editor.getByRole('button', { name: 'Close' }).click();
    assert.equal(await page.locator('#client-edit').count(), 0);
  });

  it('rotates the secret after confirmation: the new one is shown once and works, the old one stops at once', { skip }, async () => {
    assert.equal((await clientCredentials(clientId, firstSecret)).status, 200, 'the first secret works before rotation');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/Rotate the secret of Billing\? The current secret stops working at once\./).waitFor();
    await page.getByRole('button', { name: 'Yes, rotate' }).click();
    const box = page.getByRole('textbox', { name: `New client secret of ${clientId}` });
    await box.waitFor();
    await page.getByText('This secret is shown only once').waitFor();
    await shot(page, '31-applications-rotated-secret');
    await accessible(page, 'applications: rotated secret');
    assert.equal(await page.evaluate('document.activeElement.contains(document.querySelector(".secret"))'), true, 'focus moved to the new secret');
    const next = await box.inputValue();
    rotatedSecret = next;
    assert.notEqual(next, firstSecret);
    const old = await clientCredentials(clientId, firstSecret);
    assert.equal(old.status, 401);
    assert.equal(old.json().error, 'invalid_client');
    assert.equal((await clientCredentials(clientId, next)).status, 200, 'the new secret works');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal(await page.getByRole('textbox', { name: `New client secret of ${clientId}` }).count(), 0, 'gone once stored');
    assert.ok(!(await page.content()).includes(next), 'not shown again');
    const rotated = (await v1('GET', '/v1/events?types=client.secret_rotated')).json().data as Array<{ actor: { type: string }; data: { client_id: string } }>;
    assert.equal(rotated[0]?.data.client_id, clientId);
    assert.equal(rotated[0]?.actor.type, 'user');
  });

  it(
    'switches the client to private_key_jwt with a public JWKS: /token takes its assertion and no longer its secret; refused keys show the error',
    { skip },
    async () => {
      const pair = await generateKeyPair('ES256', { extractable: true });
      const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'console-k1', alg: 'ES256' };
      const privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'console-k1', alg: 'ES256' };
      await page.getByRole('button', { name: 'Edit Billing' }).click();
      const editor = page.locator('#client-edit');
      // Save and wait for this PATCH's answer ("Saved." may still show from the previous one).
      const saved = async (form: typeof editor) => {
        const [r] = await Promise.all([
          page.waitForResponse((res) => res.request().method() === 'PATCH' && res.url().endsWith(`/clients/${clientId}`)),
          form.getByRole('button', { name: 'Save changes' }).click(),
        ]);
        assert.equal(r.status(), 200, await r.text());
        await form.getByText('Saved.').waitFor();
      };
      await page.getByRole('heading', { level: 3, name: 'Edit Billing' }).waitFor();
      await editor.getByLabel('Authentication method').selectOption('private_key_jwt');
      const jwksBox = editor.getByLabel(/^JWKS: public keys only/);

      // Not JSON: refused in the page, nothing sent.
      await jwksBox.fill('{"keys": [');
      await editor.getByRole('button', { name: 'Save changes' }).click();
      await editor.getByRole('alert').filter({ hasText: 'The JWKS is not valid JSON' }).waitFor();
      // A private key (`d`): the server's refusal in place, nothing changed.
      await jwksBox.fill(JSON.stringify({ keys: [privateJwk] }));
      await editor.getByRole('button', { name: 'Save changes' }).click();
      await editor.getByRole('alert').filter({ hasText: 'must hold public keys only' }).waitFor();
      // An http jwks_uri: the egress policy's refusal.
      await editor.getByLabel('A key set fetched from a URL (jwks_uri)').check();
      await editor.getByLabel('JWKS URL (https)').fill('http://keys.example/jwks.json');
      await editor.getByRole('button', { name: 'Save changes' }).click();
      await editor.getByRole('alert').filter({ hasText: 'jwks_uri: only https URLs are allowed' }).waitFor();
      let c = (await v1('GET', `/v1/clients/${clientId}`)).json();
      assert.equal(c.token_endpoint_auth_method, 'client_secret_basic', 'nothing saved');
      assert.equal(c.jwks, null);
      assert.equal(c.jwks_uri, null);

      // An https jwks_uri is taken (registration checks only where it points)…
      await editor.getByLabel('JWKS URL (https)').fill('https://keys.example/jwks.json');
      await saved(editor);
      c = (await v1('GET', `/v1/clients/${clientId}`)).json();
      assert.equal(c.token_endpoint_auth_method, 'private_key_jwt');
      assert.equal(c.jwks_uri, 'https://keys.example/jwks.json');
      assert.equal(c.jwks, null);
      // …and replaced by an inline JWKS, which clears it (the two are exclusive).
      await editor.getByLabel('A key set (JWKS) given here').check();
      await jwksBox.fill(JSON.stringify({ keys: [publicJwk] }, null, 2));
      await shot(page, '34-applications-client-keys');
      await accessible(page, 'applications: client keys');
      await saved(editor);
      c = (await v1('GET', `/v1/clients/${clientId}`)).json();
      assert.equal(c.token_endpoint_auth_method, 'private_key_jwt');
      assert.deepEqual(c.jwks, { keys: [publicJwk] });
      assert.equal(c.jwks_uri, null);
      // The list reloads after the save: the button goes once the reloaded row arrives.
      await page.getByRole('button', { name: 'Rotate secret' }).first().waitFor({ state: 'detached' });
      const [toJwks, toUri] = (await v1('GET', '/v1/events?types=client.updated&order=desc')).json().data as Array<{
        actor: { type: string };
        data: { changed: string[] };
      }>;
      assert.deepEqual(toJwks?.data.changed, ['jwks', 'jwks_uri']);
      assert.ok(toUri?.data.changed.includes('token_endpoint_auth_method') && toUri.data.changed.includes('jwks_uri'), JSON.stringify(toUri?.data));
      assert.equal(toJwks?.actor.type, 'user');

      const now = Math.floor(Date.now() / 1000);
      const assertion = await new SignJWT({ iss: clientId, sub: clientId, aud: s.tenant.tenant.issuer, jti: crypto.randomUUID(), iat: now, exp: now + 60 })
        .setProtectedHeader({ alg: 'ES256', kid: 'console-k1' })
        .sign(pair.privateKey);
      const signed = await token({ grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: assertion });
      assert.equal(signed.status, 200, signed.text);
      assert.ok(signed.json().access_token);
      const bySecret = await clientCredentials(clientId, rotatedSecret);
      assert.equal(bySecret.status, 401, 'the secret ended with the switch');
      assert.equal(bySecret.json().error, 'invalid_client');

      // The client's type cannot be public while it keeps client_credentials: the API's refusal.
      await editor.getByLabel('Authentication method').selectOption('none');
      await editor.getByRole('button', { name: 'Save changes' }).click();
      await editor.getByRole('alert').filter({ hasText: 'public clients may not use client_credentials' }).waitFor();

      // Back to a secret (in the body): a new one is issued, shown once, and works.
      await editor.getByLabel('Authentication method').selectOption('client_secret_post');
      await editor.getByRole('button', { name: 'Save changes' }).click();
      const box = page.getByRole('textbox', { name: `New client secret of ${clientId}` });
      await box.waitFor();
      const issued = await box.inputValue();
      assert.match(issued, /^cs_/);
      const posted = await token({ grant_type: 'client_credentials', client_id: clientId, client_secret: issued });
      assert.equal(posted.status, 200, posted.text);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      c = (await v1('GET', `/v1/clients/${clientId}`)).json();
      assert.equal(c.token_endpoint_auth_method, 'client_secret_post');
      assert.deepEqual(c.jwks, { keys: [publicJwk] }, 'keys are sent only with private_key_jwt');

      // Back to private_key_jwt: the stored JWKS is in the box, saved as it is. The editor takes the
      // client from the list, which reloads after every save (a newer reload drops an older one still
      // in flight): until a reload after the JWKS save lands, the list holds the jwks_uri state and the
      // box is empty. An untouched box follows its default, so wait for the stored key to show.
      await editor.getByLabel('Authentication method').selectOption('private_key_jwt');
      await page.waitForFunction(`document.getElementById('client-edit-jwks')?.value.includes('"console-k1"')`);
      assert.deepEqual(JSON.parse(await jwksBox.inputValue()), { keys: [publicJwk] });
      await saved(editor);
      assert.equal((await v1('GET', `/v1/clients/${clientId}`)).json().token_endpoint_auth_method, 'private_key_jwt');
      await editor.getByRole('button', { name: 'Close' }).click();
    },
  );

  it("edits a resource server's scopes; a refused scope shows the API error", { skip }, async () => {
    await page.getByLabel('Name', { exact: true }).last().fill('Orders API');
    await page.getByLabel('Identifier (the audience URI)').fill('https://orders.example');
    await page.getByLabel('Scopes (space-separated, optional)').fill('read:orders');
    await page.getByRole('button', { name: 'Register API' }).click();
    await page.getByText('https://orders.example', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Edit Orders API' }).click();
    const form = page.getByRole('form', { name: 'Edit Orders API' });
    await form.getByLabel('Scopes (space-separated)').fill('read:orders "bad"');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('alert').waitFor();
    await form.getByLabel('Scopes (space-separated)').fill('read:orders write:orders');
    await form.getByLabel('Require DPoP-bound tokens').check();
    await shot(page, '32-applications-edit-api');
    await accessible(page, 'applications: edit an API');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('read:orders write:orders').waitFor();
    const rs = (await v1('GET', '/v1/resource_servers')).json().data[0];
    assert.deepEqual(rs.scopes, ['read:orders', 'write:orders']);
    assert.equal(rs.dpop_required, true);
  });

  it('is usable at 390 px with the client editor (and its JWKS) open, and nothing broke the CSP', { skip }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Edit Billing' }).click();
    await page.getByRole('heading', { level: 3, name: 'Edit Billing' }).waitFor();
    await page
      .locator('#client-edit')
      .getByLabel(/^JWKS: public keys only/)
      .waitFor();
    await noHorizontalScroll(page, 'applications with the editor at 390 px');
    await shot(page, '33-applications-edit-390');
    await accessible(page, 'applications at 390 px');
    assert.deepEqual(cspViolations, []);
  });

  it('over HTTP: a bad PATCH, an unknown client and rotating a public client are clear errors', async () => {
    await s.server.ctx.admins.grant(s.tenant.tenant.id, 'apps-http@console.test', PASSWORD);
    const c = new ConsoleClient(s);
    await c.signIn('apps-http@console.test');
    const made = await c.call('POST', '/console/api/clients', {
      client_name: 'Public',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['https://spa.example/cb'],
    });
    assert.equal(made.status, 201, made.text);
    const id = made.json().client_id;
    const badOrigin = await c.call('PATCH', `/console/api/clients/${id}`, { allowed_origins: ['https://spa.example/path'] });
    assert.equal(badOrigin.status, 400);
    assert.equal(badOrigin.json().error, 'invalid_request');
    assert.match(badOrigin.json().error_description, /allowed_origins/);
    const badRedirect = await c.call('PATCH', `/console/api/clients/${id}`, { redirect_uris: ['javascript:alert(1)'] });
    assert.equal(badRedirect.status, 400);
    assert.equal(badRedirect.json().error, 'invalid_request');
    assert.match(badRedirect.json().error_description, /redirect_uris/);
    const publicExchange = await c.call('PATCH', `/console/api/clients/${id}`, { grant_types: ['client_credentials'] });
    assert.equal(publicExchange.status, 400);
    assert.equal(publicExchange.json().error, 'invalid_client_metadata');
    const keys = await generateKeyPair('EdDSA', { extractable: true });
    const publicJwk = { ...(await exportJWK(keys.publicKey)), kid: 'h1' };
    // The body schema refuses a private key (invalid_request); the cross-field rules and the egress
    // policy are invalid_client_metadata (docs/oauth.md).
    const keyRefusals: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['no keys', { token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /requires jwks or jwks_uri/],
      [
        'a private key',
        { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...(await exportJWK(keys.privateKey)), kid: 'h1' }] } },
        'invalid_request',
        /jwks.*public keys only/,
      ],
      [
        'an http jwks_uri',
        { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://keys.example/jwks.json' },
        'invalid_client_metadata',
        /jwks_uri: only https URLs are allowed/,
      ],
      [
        'both jwks and jwks_uri',
        { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [publicJwk] }, jwks_uri: 'https://keys.example/jwks.json' },
        'invalid_client_metadata',
        /mutually exclusive/,
      ],
    ];
    for (const [what, body, error, why] of keyRefusals) {
      const r = await c.call('PATCH', `/console/api/clients/${id}`, body);
      assert.equal(r.status, 400, what);
      assert.equal(r.json().error, error, what);
      assert.match(r.json().error_description, why, what);
    }
    const badMethod = await c.call('PATCH', `/console/api/clients/${id}`, { token_endpoint_auth_method: 'client_secret_jwt' });
    assert.equal(badMethod.status, 400);
    assert.equal(badMethod.json().error, 'invalid_request');
    const rotatePublic = await c.call('POST', `/console/api/clients/${id}/secret`);
    assert.equal(rotatePublic.status, 400);
    assert.equal(rotatePublic.json().error, 'invalid_request');
    const unknown = await c.call('POST', '/console/api/clients/cli_000000000000/secret');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json().error, 'not_found');
    const noCsrf = await c.call('POST', `/console/api/clients/${id}/secret`, undefined, { 'x-csrf-token': undefined });
    assert.equal(noCsrf.status, 403);
    assert.equal(noCsrf.json().error, 'csrf_failed');
  });
});
