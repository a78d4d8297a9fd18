/**
 * The API reference at /v1/docs and the page at / in Chromium: Swagger UI renders the served
 * OpenAPI documents' operations under the page's strict CSP, with no violation and no request
 * leaving the tenant's origin (no CDN, no validator badge, no web fonts).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { consolePage, SHOTS, shot } from '../console/browser-helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CHROMIUM } from '../mfa/browser-helpers.js';

const skip = !existsSync(CHROMIUM) && 'no Chromium';

describe('the API reference and the home page in a browser', { skip }, () => {
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const csp: string[] = [];
  const elsewhere: string[] = [];
  let issuer = '';

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    s = await startTestServer();
    issuer = s.tenant.tenant.issuer;
    ({ browser, page } = await consolePage(csp));
    page.on('request', (r) => {
      if (!r.url().startsWith(`${issuer}/`) && !r.url().startsWith('data:')) elsewhere.push(r.url());
    });
    page.on('pageerror', (e) => csp.push(`page error: ${e.message}`));
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('renders the management API operations from /v1/openapi.json', async () => {
    await page.goto(`${issuer}/v1/docs`);
    // The management document opens with its tags collapsed (api-reference.ts: Swagger UI stops
    // rendering a fully listed document past about 128 operations): every tag of the document is
    // listed, and an opened tag lists its operations.
    const doc = (await (await fetch(`${issuer}/v1/openapi.json`)).json()) as {
      tags: Array<{ name: string }>;
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    await page.locator('.opblock-tag').first().waitFor();
    assert.equal(await page.locator('.opblock-tag').count(), doc.tags.length, 'every tag is listed');
    const opsOf = (tag: string) => Object.values(doc.paths).flatMap((o) => Object.values(o).filter((op) => op.tags?.[0] === tag));
    await page.locator('.opblock-tag', { hasText: 'organizations' }).first().click();
    await page.locator('.opblock').first().waitFor();
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    assert.equal(paths.length, opsOf('organizations').length, `${paths.length} operations under organizations`);
    assert.ok(
      paths.some((p) => p.replace(/\u200b/g, '') === '/v1/organizations'),
      'lists /v1/organizations',
    );
    assert.match(await page.locator('.info .title').innerText(), /Keyhall management API/);
    // An operation opens with its parameters and responses.
    await page.locator('.opblock-summary-path', { hasText: '/v1/organizations' }).first().click();
    await page.locator('.opblock-body .responses-wrapper').first().waitFor();
    await shot(page, 'api-reference');
  });

  it('switches to the OAuth and the SCIM documents', async () => {
    await page.getByRole('navigation', { name: 'OpenAPI documents' }).getByRole('link', { name: 'OAuth 2.0 and OpenID Connect' }).click();
    await page.locator('.opblock-summary-path', { hasText: '/token' }).first().waitFor();
    await page.getByRole('navigation', { name: 'OpenAPI documents' }).getByRole('link', { name: 'SCIM 2.0' }).click();
    // Its paths are relative to the server URL `<issuer>/scim/v2`.
    await page.locator('.opblock-summary-path', { hasText: '/Users' }).first().waitFor();
    assert.match(await page.locator('.servers').innerText(), /\/scim\/v2/);
  });

  it('the home page links to the reference', async () => {
    await page.goto(`${issuer}/`);
    await page.getByRole('link', { name: 'API reference' }).click();
    await page.locator('.opblock-tag').first().waitFor();
    assert.equal(page.url(), `${issuer}/v1/docs`);
  });

  it('caused no CSP violation, no script error and no request to another origin', () => {
    assert.deepEqual(csp, []);
    assert.deepEqual(elsewhere, []);
  });
});
