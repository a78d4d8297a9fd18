import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { HttpResponse } from '../helpers/http.js';
import { type Browser, decodeEntities, PASSWORD, REDIRECT, signIn, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, type SsoTestServer, startSsoServer } from './helpers.js';
import { type SamlUser, startTestIdp, type TestIdp } from './saml-idp.js';

/**
 * Explicit linking through a SAML connection (docs/sso.md, "Linking an account explicitly"): the
 * AuthnRequest carries the link, the cross-site ACS post keeps the outcome, and the same-site
 * completion page links the NameID to the signed-in user, whatever email the assertion names.
 */
describe('SAML SSO: linking an account explicitly', () => {
  let s: SsoTestServer;
  let idp: TestIdp;
  let app: { client_id: string };
  let c: { id: string; metadata: string };
  let adminId: string;
  const corp: SamlUser = { email: 'ops@acme.test', nameId: 'E-1042' };

  before(async () => {
    s = await startSsoServer();
    idp = await startTestIdp();
    const org = (await s.api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
    assert.equal((await s.api('POST', `/organizations/${org}/domain_verification`, { method: 'manual' })).json().verified, true);
    const r = await s.api('POST', `/organizations/${org}/sso/connections`, { protocol: 'saml', name: 'Corp IdP', saml: { metadata_xml: idp.metadataXml } });
    assert.equal(r.status, 201, r.text);
    c = { id: r.json().id, metadata: (await s.browser().get(`/sso/saml/${r.json().id}/metadata`)).text };
    adminId = (await s.server.ctx.admins.grant(s.tenant.tenant.id, 'root@acme.test', PASSWORD)).user.id;
    app = await s.publicClient();
  });
  after(() => s.close());

  const failures = async () =>
    ((await s.api('GET', '/events?types=sso.login.failed&limit=100')).json().data as Array<{ data: { reason: string } }>).map((e) => e.data.reason);
  const csrfOf = (page: HttpResponse) => decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!);

  /** The IdP answers the AuthnRequest `toIdp` redirects to for `user`; the ACS post comes from elsewhere; `b` completes. */
  async function complete(b: Browser, toIdp: HttpResponse, user: SamlUser): Promise<HttpResponse> {
    assert.equal(toIdp.status, 303, toIdp.text.slice(0, 300));
    const response = await idp.respond(c.metadata, await idp.requestId(new URL(toIdp.headers.location!), c.metadata), user);
    const acs = await s.browser().post(`/sso/saml/${c.id}/acs`, { SAMLResponse: response }, { origin: new URL(idp.ssoUrl).origin });
    assert.equal(acs.status, 303, acs.text.slice(0, 300));
    const next = new URL(acs.headers.location!, s.issuer);
    return b.get(next.pathname + next.search);
  }

  async function signInAs(b: Browser, user: SamlUser): Promise<HttpResponse> {
    const login = await authorizeAtSp(s, b, app.client_id);
    const flow = new URL(login, s.issuer).searchParams.get('flow')!;
    return complete(b, await b.get(`/sso/${c.id}/start?flow=${encodeURIComponent(flow)}`), user);
  }

  async function startLink(b: Browser, email: string): Promise<HttpResponse> {
    assert.equal((await signIn(b, '/login?return_to=%2Fsessions', email)).headers.location, '/sessions');
    const page = await b.get('/sessions');
    assert.match(page.text, new RegExp(`action="/sso/${c.id}/link"`));
    return b.post(`/sso/${c.id}/link`, { csrf_token: csrfOf(page) });
  }

  it('the administrator links a NameID from /sessions; SAML then signs them in through it, whatever email it asserts', async () => {
    const refused = await signInAs(s.browser(), { email: 'root@acme.test' });
    assert.equal(refused.status, 400);
    assert.equal((await failures()).at(-1), 'administrator_link_refused');

    const b = s.browser();
    const back = await complete(b, await startLink(b, 'root@acme.test'), corp);
    assert.equal(back.status, 303, back.text.slice(0, 300));
    assert.equal(back.headers.location, '/sessions');
    assert.match((await b.get('/sessions')).text, /<table id="sso-linked"><tbody><tr data-connection="[^"]+"><td>Corp IdP<\/td><td>Acme<\/td>/);

    const atApp = await signInAs(s.browser(), corp);
    assert.equal(atApp.status, 303, atApp.text.slice(0, 300));
    assert.ok(atApp.headers.location!.startsWith(REDIRECT), atApp.headers.location);
    const t = await s.post('/token', {
      grant_type: 'authorization_code',
      code: new URL(atApp.headers.location!).searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: app.client_id,
      code_verifier: VERIFIER,
    });
    assert.equal(decodeJwt(t.json().id_token).sub, adminId);
    assert.equal(decodeJwt(t.json().id_token).email, 'root@acme.test');
  });

  it("a completion in a browser whose session is now another user's is refused; the NameID stays the administrator's", async () => {
    const bob = await s.createUser('bob@acme.test');
    await s.createUser('dave@acme.test');
    const b = s.browser();
    const toIdp = await startLink(b, 'bob@acme.test');
    assert.equal((await signIn(b, '/login?return_to=%2Fsessions', 'dave@acme.test')).headers.location, '/sessions');
    const r = await complete(b, toIdp, { email: 'bob@acme.test', nameId: 'E-2000' });
    assert.equal(r.status, 400);
    assert.match(r.text, /access_denied/);
    assert.equal((await failures()).at(-1), 'link_session_mismatch');

    const b2 = s.browser();
    const taken = await complete(b2, await startLink(b2, 'bob@acme.test'), corp);
    assert.equal(taken.status, 400);
    assert.equal((await failures()).at(-1), 'identity_in_use');
    const rows = await s.server.ctx.db.kysely.selectFrom('sso_identities').select(['user_id', 'subject']).where('connection_id', '=', c.id).execute();
    assert.deepEqual(rows, [{ user_id: adminId, subject: 'E-1042' }]);
    assert.ok(!rows.some((row) => row.user_id === bob.id));
  });
});
