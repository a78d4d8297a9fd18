import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTxtResolver, DnsConfigError } from '../../src/egress/dns.js';
import { expectError, v1 } from '../helpers/v1.js';
import { PASSWORD, REDIRECT } from '../signin/helpers.js';
import { authorizeAtSp, oidcConnection, type SsoTestServer, signInUpstream, startSsoServer, upstreamUser } from './helpers.js';

describe('organization domains, home-realm discovery and "SSO required"', () => {
  let s: SsoTestServer;
  const dns = new Map<string, string[]>();
  let app: { client_id: string };
  let acme: string;
  let conn: { id: string };

  before(async () => {
    s = await startSsoServer({}, { txtResolver: async (name) => dns.get(name) ?? [] });
    app = await s.publicClient();
    acme = (await s.api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
    conn = await oidcConnection(s, acme);
  });
  after(() => s.close());

  const loginPost = async (b: ReturnType<SsoTestServer['browser']>, location: string, email: string, password: string) =>
    b.submit(await b.get(location), { email, password });

  it('an unverified domain never routes: the password form answers', async () => {
    const b = s.browser();
    const r = await loginPost(b, await authorizeAtSp(s, b, app.client_id), 'someone@acme.test', '');
    assert.equal(r.status, 401);
    assert.equal((await s.api('GET', `/organizations/${acme}`)).json().domain_verified, false);
  });

  it('verifies a domain by its DNS TXT record; refuses what does not prove it', async () => {
    const v = await s.api('GET', `/organizations/${acme}/domain_verification`);
    assert.equal(v.status, 200);
    assert.equal(v.json().verified, false);
    assert.equal(v.json().dns.name, '_keyhall-challenge.acme.test');
    assert.match(v.json().dns.value, /^keyhall-domain-verification=[0-9a-f]{32}$/);
    const r1 = await s.api('POST', `/organizations/${acme}/domain_verification`, { method: 'dns' });
    expectError(r1, 400, 'invalid_request');
    assert.match(r1.json().error_description, /no TXT record _keyhall-challenge\.acme\.test/);
    dns.set('_keyhall-challenge.acme.test', ['v=spf1 -all', 'keyhall-domain-verification=wrong']);
    expectError(await s.api('POST', `/organizations/${acme}/domain_verification`, { method: 'dns' }), 400, 'invalid_request');
    expectError(await s.api('POST', `/organizations/${acme}/domain_verification`, { method: 'guess' }), 400, 'invalid_request');
    expectError(await s.api('POST', `/organizations/${acme}/domain_verification`, {}), 400, 'invalid_request');
    dns.set('_keyhall-challenge.acme.test', ['v=spf1 -all', v.json().dns.value]);
    // An organization key may verify by DNS, not manually.
    const orgKey = (await s.api('POST', `/organizations/${acme}/api_keys`, { name: 'k', scopes: ['organizations:write', 'organizations:read'] })).json().key;
    expectError(await v1(s, orgKey)('POST', `/organizations/${acme}/domain_verification`, { method: 'manual' }), 403, 'forbidden');
    const ok = await v1(s, orgKey)('POST', `/organizations/${acme}/domain_verification`, { method: 'dns' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json().verified, true);
    assert.equal((await s.api('GET', `/organizations/${acme}`)).json().domain_verified, true);
    const events = (await s.api('GET', `/events?organization_id=${acme}&types=organization.domain_verified`)).json().data;
    assert.deepEqual(
      events.map((e: { data: unknown }) => e.data),
      [{ organization_id: acme, domain: 'acme.test', method: 'dns' }],
    );
  });

  it('one organization per verified domain; manual verification by a platform key; a changed domain must be verified again', async () => {
    const copycat = (await s.api('POST', '/organizations', { name: 'Copycat', domain: 'acme.test' })).json().id;
    expectError(await s.api('POST', `/organizations/${copycat}/domain_verification`, { method: 'manual' }), 409, 'conflict');
    const bare = (await s.api('POST', '/organizations', { name: 'No domain' })).json().id;
    expectError(await s.api('POST', `/organizations/${bare}/domain_verification`, { method: 'manual' }), 400, 'invalid_request');
    expectError(await s.api('POST', '/organizations/org_00000000000000000000000000/domain_verification', { method: 'manual' }), 404, 'not_found');
    const other = (await s.api('POST', '/organizations', { name: 'Other', domain: 'other.test' })).json().id;
    const m = await s.api('POST', `/organizations/${other}/domain_verification`, { method: 'manual' });
    assert.equal(m.status, 200, m.text);
    assert.equal(m.json().verified, true);
    const p = await s.api('PATCH', `/organizations/${other}`, { domain: 'elsewhere.test' });
    assert.equal(p.json().domain_verified, false);
    assert.equal((await s.api('PATCH', `/organizations/${other}`, { name: 'Still other' })).json().domain_verified, false);
  });

  it('home-realm discovery: an email of the verified domain with no password continues at the IdP and ends in a code', async () => {
    await upstreamUser(s, 'hedy@acme.test', { name: 'Hedy Lamarr' });
    const b = s.browser();
    const toIdp = await loginPost(b, await authorizeAtSp(s, b, app.client_id), 'Hedy@Acme.test', '');
    assert.equal(toIdp.status, 303);
    const upstream = new URL(toIdp.headers.location!);
    assert.equal(upstream.searchParams.get('login_hint'), 'Hedy@Acme.test');
    const callback = await signInUpstream(s, toIdp, 'hedy@acme.test');
    const atApp = await b.get(callback.pathname + callback.search);
    assert.equal(atApp.status, 303);
    const back = new URL(atApp.headers.location!);
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.ok(back.searchParams.get('code'));
  });

  it('links an existing user of the verified domain instead of creating another', async () => {
    const local = (await s.api('POST', '/users', { email: 'kathleen@acme.test', password: PASSWORD })).json();
    await upstreamUser(s, 'kathleen@acme.test');
    const b = s.browser();
    const toIdp = await loginPost(b, await authorizeAtSp(s, b, app.client_id), 'kathleen@acme.test', '');
    const callback = await signInUpstream(s, toIdp, 'kathleen@acme.test');
    assert.equal((await b.get(callback.pathname + callback.search)).status, 303);
    const found = (await s.api('GET', '/users?email=kathleen@acme.test')).json().data;
    assert.deepEqual(
      found.map((u: { id: string }) => u.id),
      [local.id],
    );
    const members = (await s.api('GET', `/organizations/${acme}/members`)).json().data;
    assert.ok(members.some((m: { user_id: string }) => m.user_id === local.id));
  });

  it('a typed password still signs a local user of the domain in, until the organization requires SSO', async () => {
    await s.createUser('breakglass@acme.test');
    const b = s.browser();
    const r = await loginPost(b, await authorizeAtSp(s, b, app.client_id), 'breakglass@acme.test', PASSWORD);
    assert.equal(r.status, 303);
    assert.equal(new URL(r.headers.location!).origin + new URL(r.headers.location!).pathname, REDIRECT);

    assert.equal((await s.api('PATCH', `/organizations/${acme}`, { sso_required: true })).json().sso_required, true);
    const before = (await s.api('GET', `/events?types=login.failed,login.succeeded&limit=100`)).json().data.length;
    const b2 = s.browser();
    const r2 = await loginPost(b2, await authorizeAtSp(s, b2, app.client_id), 'breakglass@acme.test', PASSWORD);
    assert.equal(r2.status, 303);
    assert.equal(new URL(r2.headers.location!).origin, s.idpIssuer, 'the password is never checked: on to the IdP');
    const b3 = s.browser();
    const r3 = await loginPost(b3, await authorizeAtSp(s, b3, app.client_id), 'breakglass@acme.test', 'wrong password');
    assert.equal(new URL(r3.headers.location!).origin, s.idpIssuer);
    assert.equal((await s.api('GET', `/events?types=login.failed,login.succeeded&limit=100`)).json().data.length, before, 'no password login attempted');

    // Required, and the only connection disabled: no way in, and no password either.
    await s.api('PATCH', `/organizations/${acme}/sso/connections/${conn.id}`, { enabled: false });
    const b4 = s.browser();
    const r4 = await loginPost(b4, await authorizeAtSp(s, b4, app.client_id), 'breakglass@acme.test', PASSWORD);
    assert.equal(r4.status, 403);
    assert.match(r4.text, /requires single sign-on/);
    await s.api('PATCH', `/organizations/${acme}/sso/connections/${conn.id}`, { enabled: true });
    await s.api('PATCH', `/organizations/${acme}`, { sso_required: false });
  });

  it('/authorize with connection= (or organization= of an org requiring SSO) skips the login form', async () => {
    const b = s.browser();
    const login = await authorizeAtSp(s, b, app.client_id, { connection: conn.id, login_hint: 'hedy@acme.test' });
    const toIdp = await b.get(login);
    assert.equal(toIdp.status, 303);
    assert.equal(new URL(toIdp.headers.location!).origin, s.idpIssuer);
    assert.equal(new URL(toIdp.headers.location!).searchParams.get('login_hint'), 'hedy@acme.test');
    const callback = await signInUpstream(s, toIdp, 'hedy@acme.test');
    assert.equal(new URL((await b.get(callback.pathname + callback.search)).headers.location!).origin + '/cb', REDIRECT);

    // organization= alone: the form, unless the organization requires SSO.
    const b2 = s.browser();
    assert.equal((await b2.get(await authorizeAtSp(s, b2, app.client_id, { organization: acme }))).status, 200);
    await s.api('PATCH', `/organizations/${acme}`, { sso_required: true });
    const b3 = s.browser();
    const r3 = await b3.get(await authorizeAtSp(s, b3, app.client_id, { organization: acme }));
    assert.equal(new URL(r3.headers.location!).origin, s.idpIssuer);
    await s.api('PATCH', `/organizations/${acme}`, { sso_required: false });

    // A hint naming another organization's connection is ignored; a malformed one is an error for the client.
    const other = (await s.api('POST', '/organizations', { name: 'Hinted' })).json().id;
    const b4 = s.browser();
    assert.equal((await b4.get(await authorizeAtSp(s, b4, app.client_id, { organization: other, connection: conn.id }))).status, 200);
    const bad = await b4.get(
      `/authorize?${new URLSearchParams({ client_id: app.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', connection: 'okta' })}`,
    );
    assert.equal(bad.status, 303);
    assert.equal(new URL(bad.headers.location!).searchParams.get('error'), 'invalid_request');
  });

  it('KEYHALL_DNS_SERVERS must list IP addresses', () => {
    assert.throws(() => createTxtResolver('not-an-ip'), DnsConfigError);
    assert.equal(typeof createTxtResolver('127.0.0.1:5353, [::1]:53'), 'function');
  });
});
