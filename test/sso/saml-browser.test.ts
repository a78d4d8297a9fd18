/**
 * SAML sign-in in real browsers (Debian chromium, playwright-core): the IdP (samlify) is another
 * site (127.0.0.1, the tenant is on localhost), so its auto-submitting form post to the ACS is
 * cross-site and carries none of our SameSite=Lax cookies; the 303 to the completion page is a
 * top-level GET that does. Skipped only when /usr/bin/chromium is missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Request } from 'playwright-core';
import { CHROMIUM, launch } from '../mfa/browser-helpers.js';
import { v1 } from '../helpers/v1.js';
import { S256, type SigninTestServer, startSigninServer, VERIFIER } from '../signin/helpers.js';
import { startTestIdp, type TestIdp } from './saml-idp.js';

const skip = existsSync(CHROMIUM) ? false : 'chromium not installed';

describe('SAML sign-in in real browsers (chromium): the completion page opens the session only for the browser that started it', { skip }, () => {
  let s: SigninTestServer;
  let idp: TestIdp;
  let idpServer: http.Server;
  let app: http.Server;
  let redirectUri: string;
  let spMetadata: string;
  let conn: string;
  let clientId: string;
  /** Off: the IdP keeps its answer for the attacker's page (`/attacker`) instead of posting it. */
  let autoPost = true;
  let held = '';
  const browsers: Array<Awaited<ReturnType<typeof launch>>> = [];

  /** The HTML form the IdP answers with: it posts SAMLResponse to the ACS as soon as it loads. */
  const autoSubmit = (acs: string, samlResponse: string) =>
    `<!doctype html><form method="post" action="${acs}"><input type="hidden" name="SAMLResponse" value="${samlResponse}"></form><script>document.forms[0].submit()</script>`;

  before(async () => {
    s = await startSigninServer({ localhost: true });
    app = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app callback'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(app.address() as { port: number }).port}/cb`;
    idpServer = http.createServer((req, res) => {
      void (async () => {
        const url = new URL(req.url!, 'http://127.0.0.1');
        if (url.pathname === '/attacker') return res.writeHead(200, { 'content-type': 'text/html' }).end(held);
        const requestId = await idp.requestId(url, spMetadata);
        const email = autoPost ? 'ada@acme.test' : 'victim@acme.test';
        const form = autoSubmit(`${s.issuer}/sso/saml/${conn}/acs`, await idp.respond(spMetadata, requestId, { email, name: 'Ada' }));
        if (autoPost) return res.writeHead(200, { 'content-type': 'text/html' }).end(form);
        held = form;
        return res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in at the IdP');
      })().catch((err: Error) => res.writeHead(500).end(err.message));
    });
    await new Promise<void>((resolve) => idpServer.listen(0, '127.0.0.1', resolve));
    idp = await startTestIdp(`http://127.0.0.1:${(idpServer.address() as { port: number }).port}/metadata`);
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
    const created = await api('POST', `/organizations/${org}/sso/connections`, { protocol: 'saml', name: 'Acme IdP', saml: { metadata_xml: idp.metadataXml } });
    assert.equal(created.status, 201, created.text);
    conn = created.json().id;
    spMetadata = (await s.browser().get(`/sso/saml/${conn}/metadata`)).text;
    clientId = (await s.publicClient({ redirect_uris: [redirectUri] })).client_id;
    browsers.push(await launch(), await launch());
  });
  after(async () => {
    for (const b of browsers) await b.close();
    await s?.close();
    app?.close();
    idpServer?.close();
  });

  const authorizeUrl = async () =>
    `${s.issuer}/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid email', state: 's1', code_challenge: await S256(VERIFIER), code_challenge_method: 'S256', connection: conn })}`;
  const cookieNames = async (i: number) => (await browsers[i]!.context.cookies(s.issuer)).map((c) => c.name);

  it('the browser that started signs in: the ACS post carries no cookie, the completion GET carries keyhall_sso', async () => {
    const page = await browsers[0]!.context.newPage();
    // Every request to our SAML endpoints, with the Cookie header chromium sent.
    const requests: Array<Promise<{ method: string; path: string; cookie: string }>> = [];
    page.on('request', (r: Request) => {
      const u = new URL(r.url());
      if (u.origin === s.issuer && u.pathname.startsWith('/sso/saml/'))
        requests.push(r.allHeaders().then((h) => ({ method: r.method(), path: u.pathname, cookie: h.cookie ?? '' })));
    });
    await page.goto(await authorizeUrl());
    await page.waitForURL((u) => u.toString().startsWith(`${redirectUri}?`));
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('state'), 's1');
    assert.ok(back.searchParams.get('code'));
    assert.ok((await cookieNames(0)).includes('keyhall_session'));
    const seen = await Promise.all(requests);
    const acs = seen.find((r) => r.path.endsWith('/acs'));
    const complete = seen.find((r) => r.path.endsWith('/complete'));
    assert.equal(acs?.method, 'POST');
    assert.doesNotMatch(acs.cookie, /keyhall_sso=/, 'a cross-site post carries no SameSite=Lax cookie');
    assert.equal(complete?.method, 'GET');
    assert.match(complete.cookie, /keyhall_sso=/, 'the top-level GET after the 303 does');
    await page.close();
  });

  it("an answer to the attacker's request, auto-posted from the victim's browser, signs nobody in", async () => {
    // The attacker starts /authorize of the application in his browser and signs in at the IdP;
    // the IdP's form lands on his page instead of being posted.
    autoPost = false;
    const attacker = await browsers[0]!.context.newPage();
    await browsers[0]!.context.clearCookies();
    await attacker.goto(await authorizeUrl());
    assert.match((await attacker.textContent('body')) ?? '', /signed in at the IdP/);
    assert.ok(held.includes('SAMLResponse'));
    // The victim opens the attacker's page: her browser posts the response, follows the 303.
    const victim = await browsers[1]!.context.newPage();
    await victim.goto(`${new URL(idp.ssoUrl).origin}/attacker`);
    await victim.waitForURL((u) => u.pathname.endsWith('/complete'));
    await victim.waitForLoadState();
    assert.match((await victim.textContent('body')) ?? '', /started in another browser/);
    assert.ok(!(await cookieNames(1)).includes('keyhall_session'), 'the victim is not signed in');
    await attacker.close();
    await victim.close();
  });
});
