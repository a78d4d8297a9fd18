import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { HttpResponse } from '../helpers/http.js';
import { type Browser, REDIRECT, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, type SsoTestServer, startSsoServer } from './helpers.js';
import { type SamlUser, startTestIdp, type TestIdp } from './saml-idp.js';

/**
 * The SAML side of the trust boundaries (docs/sso.md): email_verified only for the organization's
 * verified domain (and, when configured, the IdP's email_verified attribute), and Keyhall's MFA
 * policy after a SAML first factor unless the connection trusts the IdP's AuthnContextClassRef.
 */
describe('SAML SSO trust: email_verified and MFA', () => {
  let s: SsoTestServer;
  let idp: TestIdp;
  let org: string;
  let app: { client_id: string };
  const MULTI = 'http://schemas.microsoft.com/claims/multipleauthn';

  before(async () => {
    s = await startSsoServer();
    idp = await startTestIdp();
    org = (await s.api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
    // A full-privilege platform key (domains:verify) vouches for the domain.
    assert.equal((await s.api('POST', `/organizations/${org}/domain_verification`, { method: 'manual' })).json().verified, true);
    app = await s.publicClient();
  });
  after(() => s.close());

  const connection = async (saml: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    const r = await s.api('POST', `/organizations/${org}/sso/connections`, {
      protocol: 'saml',
      name: 'IdP',
      ...extra,
      saml: { metadata_xml: idp.metadataXml, ...saml },
    });
    assert.equal(r.status, 201, r.text);
    return { id: r.json().id as string, metadata: (await s.browser().get(`/sso/saml/${r.json().id}/metadata`)).text };
  };

  /** /authorize → /sso/start → the IdP answers for `user` → the cross-site ACS post → the same-site completion GET. */
  async function signInAs(b: Browser, c: { id: string; metadata: string }, user: SamlUser): Promise<HttpResponse> {
    const login = await authorizeAtSp(s, b, app.client_id);
    const flow = new URL(login, s.issuer).searchParams.get('flow')!;
    const toIdp = await b.get(`/sso/${c.id}/start?flow=${encodeURIComponent(flow)}`);
    assert.equal(toIdp.status, 303);
    const response = await idp.respond(c.metadata, await idp.requestId(new URL(toIdp.headers.location!), c.metadata), user);
    const acs = await s.browser().post(`/sso/saml/${c.id}/acs`, { SAMLResponse: response }, { origin: new URL(idp.ssoUrl).origin });
    assert.equal(acs.status, 303, acs.text.slice(0, 300));
    return b.get(new URL(acs.headers.location!, s.issuer).pathname + new URL(acs.headers.location!, s.issuer).search);
  }

  const idToken = async (atApp: HttpResponse) => {
    assert.equal(atApp.status, 303, atApp.text.slice(0, 300));
    assert.ok(atApp.headers.location!.startsWith(REDIRECT), atApp.headers.location);
    const code = new URL(atApp.headers.location!).searchParams.get('code')!;
    const t = await s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: VERIFIER });
    assert.equal(t.status, 200, t.text);
    return decodeJwt(t.json().id_token);
  };

  it('without an email_verified attribute: verified only in the verified domain', async () => {
    const c = await connection();
    assert.equal((await idToken(await signInAs(s.browser(), c, { email: 'bob@acme.test' }))).email_verified, true);
    const outsider = await idToken(await signInAs(s.browser(), c, { email: 'ceo@victim-bank.test' }));
    assert.equal(outsider.email, 'ceo@victim-bank.test');
    assert.equal(outsider.email_verified, false);
  });

  it("with an email_verified attribute: the IdP's statement decides inside the domain, and counts for nothing outside it", async () => {
    const c = await connection({ attributes: { email_verified: 'email_verified' } });
    const view = (await s.api('GET', `/organizations/${org}/sso/connections/${c.id}`)).json();
    assert.equal(view.saml.attributes.email_verified, 'email_verified');
    const no = await idToken(await signInAs(s.browser(), c, { email: 'carol@acme.test', attributes: { email_verified: 'false' } }));
    assert.equal(no.email_verified, false);
    const yes = await idToken(await signInAs(s.browser(), c, { email: 'dave@acme.test', attributes: { email_verified: 'true' } }));
    assert.equal(yes.email_verified, true);
    const outside = await idToken(await signInAs(s.browser(), c, { email: 'mallory@elsewhere.test', attributes: { email_verified: 'true' } }));
    assert.equal(outside.email_verified, false);
    const cleared = await s.api('PATCH', `/organizations/${org}/sso/connections/${c.id}`, { saml: { attributes: { email_verified: null } } });
    assert.equal(cleared.json().saml.attributes.email_verified, null);
  });

  it("an organization requiring MFA: Keyhall's second factor after SAML unless a trusted IdP states MFA in AuthnContextClassRef", async () => {
    assert.equal((await s.api('PUT', `/organizations/${org}/mfa_policy`, { policy: 'required' })).status, 200);
    const untrusted = await connection();
    // The IdP's claim counts for nothing on a connection that does not trust it.
    const r1 = await signInAs(s.browser(), untrusted, { email: 'erin@acme.test', authnContext: MULTI });
    assert.equal(r1.status, 303);
    assert.match(r1.headers.location!, /^\/mfa\/challenge\?flow=flw_/);

    const trusted = await connection({}, { trust_idp_mfa: true });
    const r2 = await signInAs(s.browser(), trusted, { email: 'frank@acme.test', authnContext: MULTI });
    const id = await idToken(r2);
    assert.deepEqual(id.amr, ['fed', 'mfa']);
    assert.equal(id.acr, 'mfa');
    // Trusted, but a password at the IdP is one factor: the challenge.
    const r3 = await signInAs(s.browser(), trusted, { email: 'grace@acme.test' });
    assert.match(r3.headers.location!, /^\/mfa\/challenge\?flow=flw_/);
    const ok = (await s.api('GET', `/events?organization_id=${org}&types=sso.login.succeeded&limit=100`)).json().data as Array<{
      data: Record<string, unknown>;
    }>;
    assert.deepEqual(
      ok.slice(-3).map((e) => [e.data.amr, e.data.second_factor_pending ?? false]),
      [
        [['fed'], true],
        [['fed', 'mfa'], false],
        [['fed'], true],
      ],
    );
  });
});
