import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { ManualClock } from '../../src/kernel/clock.js';
import type { HttpResponse } from '../helpers/http.js';
import type { Browser } from '../signin/helpers.js';
import { REDIRECT, VERIFIER } from '../signin/helpers.js';
import { authorizeAtSp, type SsoTestServer, startSsoServer } from './helpers.js';
import { type ResponseTweaks, type SamlUser, startTestIdp, type TestIdp, unsigned, withDoctype, wrapped } from './saml-idp.js';

describe('SAML SSO: a samlify identity provider signs people in through the ACS', () => {
  let s: SsoTestServer;
  let clock: ManualClock;
  let idp: TestIdp;
  let org: string;
  let conn: string;
  let spMetadata: string;
  let app: { client_id: string };
  /** Every log line the server wrote (info and up). */
  const logs: string[] = [];

  const samlConnection = async (extra: Record<string, unknown> = {}, saml: Record<string, unknown> = {}) => {
    const r = await s.api('POST', `/organizations/${org}/sso/connections`, {
      protocol: 'saml',
      name: 'Test IdP',
      ...extra,
      saml: { metadata_xml: idp.metadataXml, ...saml },
    });
    assert.equal(r.status, 201, r.text);
    return r.json().id as string;
  };
  const metadataOf = async (id: string) => (await s.browser().get(`/sso/saml/${id}/metadata`)).text;

  before(async () => {
    clock = new ManualClock();
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    s = await startSsoServer({ logLevel: 'info' }, { clock, logStream });
    idp = await startTestIdp();
    org = (await s.api('POST', '/organizations', { name: 'Acme', domain: 'acme.test' })).json().id;
    conn = await samlConnection({ group_roles: { Admins: 'admin' } });
    spMetadata = await metadataOf(conn);
    app = await s.publicClient();
  });
  after(() => s.close());

  const events = async (types: string) =>
    (await s.api('GET', `/events?organization_id=${org}&types=${types}&limit=100`)).json().data as Array<{
      type: string;
      data: Record<string, unknown>;
      actor: { type: string; id: string };
    }>;
  const failures = async () => (await events('sso.login.failed')).map((e) => e.data.reason);
  const redeem = (code: string) =>
    s.post('/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: VERIFIER });

  /** /authorize at the SP → the login page's flow → /sso/{id}/start: the AuthnRequest's ID at the IdP. */
  async function startAt(b: Browser, connectionId = conn, metadata = spMetadata): Promise<string> {
    const login = await authorizeAtSp(s, b, app.client_id);
    const flow = new URL(login, s.issuer).searchParams.get('flow');
    assert.ok(flow, `no flow: ${login}`);
    const r = await b.get(`/sso/${connectionId}/start?flow=${encodeURIComponent(flow)}`);
    assert.equal(
      r.status,
      303,
      r.text
        .replace(/<style[\s\S]*?<\/style>/g, '')
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .slice(0, 600),
    );
    const toIdp = new URL(r.headers.location!);
    assert.equal(toIdp.origin + toIdp.pathname, idp.ssoUrl);
    return idp.requestId(toIdp, metadata);
  }
  /**
   * The IdP's form post to the ACS as a browser makes it: cross-site (the IdP's Origin), so
   * without our SameSite=Lax cookies — a client with no cookies plays it.
   */
  const postAcs = (samlResponse: string, connectionId = conn) =>
    s.browser().post(`/sso/saml/${connectionId}/acs`, { SAMLResponse: samlResponse }, { origin: new URL(idp.ssoUrl).origin });
  /** The same-site completion page the ACS answers 303 to (a path with the one-time handle), or undefined. */
  const completion = (acs: HttpResponse) => {
    if (acs.status !== 303) return undefined;
    const to = new URL(acs.headers.location!, s.issuer);
    return to.origin === s.issuer && /^\/sso\/saml\/[^/]+\/complete$/.test(to.pathname) ? to.pathname + to.search : undefined;
  };
  /** The ACS post, then the 303 hop followed by `b` with its cookie jar (a top-level GET: its Lax cookies go along). */
  async function post(b: Browser, samlResponse: string, connectionId = conn): Promise<HttpResponse> {
    const acs = await postAcs(samlResponse, connectionId);
    const next = completion(acs);
    return next === undefined ? acs : b.get(next);
  }
  /** A round trip answered by the IdP: the response (not yet posted). */
  async function answered(b: Browser, user: SamlUser, tweaks?: ResponseTweaks): Promise<string> {
    return idp.respond(spMetadata, await startAt(b), user, tweaks);
  }
  async function refused(b: Browser, samlResponse: string, reason: string, connectionId = conn) {
    const before = (await failures()).length;
    const r = await post(b, samlResponse, connectionId);
    assert.equal(r.status, 400, r.text.slice(0, 300));
    assert.match(r.text, /access_denied/);
    const after = await failures();
    assert.deepEqual(after.slice(before), [reason]);
  }

  it('signs in end to end: a signed assertion, JIT user and mapped role, a code at the application, audited', async () => {
    const b = s.browser();
    const response = await answered(b, { email: 'ada@acme.test', name: 'Ada Lovelace', groups: ['Staff', 'Admins'] });
    const atApp = await post(b, response);
    assert.equal(atApp.status, 303, atApp.text.slice(0, 300));
    const back = new URL(atApp.headers.location!);
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('state'), 'app-state');
    const tokens = await redeem(back.searchParams.get('code')!);
    assert.equal(tokens.status, 200, tokens.text);
    const id = decodeJwt(tokens.json().id_token);
    assert.equal(id.email, 'ada@acme.test');
    assert.equal(id.name, 'Ada Lovelace');
    const members = (await s.api('GET', `/organizations/${org}/members`)).json().data;
    assert.deepEqual(
      members.map((m: { user_id: string; role: string }) => [m.user_id, m.role]),
      [[id.sub, 'admin']],
    );
    const added = await events('member.added');
    assert.deepEqual(added[0]!.data, { organization_id: org, user_id: id.sub, role: 'admin', connection_id: conn });
    const ok = await events('sso.login.succeeded');
    assert.equal(ok.length, 1);
    assert.equal(ok[0]!.data.connection_id, conn);
    assert.deepEqual(ok[0]!.actor, { type: 'user', id: id.sub });
    // Signed in at the SP.
    assert.equal((await b.get('/sessions')).status, 200);

    // The same response again: a replay, refused on its assertion id.
    await refused(s.browser(), response, 'assertion_replayed');
    const all = JSON.stringify(await events('sso.login.succeeded,sso.login.failed'));
    const assertionId = Buffer.from(response, 'base64')
      .toString('utf8')
      .match(/<saml:Assertion[^>]* ID="([^"]+)"/)![1]!;
    assert.ok(!all.includes(assertionId) && !all.includes(response.slice(0, 40)), 'never the assertion');

    // A later login of the same NameID signs the same user in, with the IdP's new name.
    const b2 = s.browser();
    const again = await post(b2, await answered(b2, { email: 'ada@acme.test', name: 'Countess Lovelace' }));
    assert.equal(again.status, 303);
    const t2 = (await redeem(new URL(again.headers.location!).searchParams.get('code')!)).json();
    assert.equal(decodeJwt(t2.id_token).sub, id.sub);
    assert.equal(decodeJwt(t2.id_token).name, 'Countess Lovelace');
    assert.equal((await events('member.added')).length, 1);
  });

  it('refuses an unsigned response, a wrong audience, a wrong recipient, a foreign issuer and a transient NameID, each audited', async () => {
    const b = s.browser();
    const user = { email: 'mallory@acme.test' };
    await refused(b, unsigned(await answered(b, user)), 'signature_invalid');
    await refused(b, await answered(b, user, { Audience: 'https://another-sp.test/metadata' }), 'audience_mismatch');
    await refused(b, await answered(b, user, { SubjectRecipient: 'https://another-sp.test/acs' }), 'recipient_mismatch');
    await refused(b, await answered(b, user, { Issuer: 'https://someone-else.test' }), 'invalid_response');
    await refused(b, await answered(b, user, { NameIDFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient' }), 'invalid_response');
    assert.equal((await s.api('GET', '/users?email=mallory@acme.test')).json().data.length, 0);
  });

  it('refuses signature wrapping: a second, unsigned assertion, or the signed one moved aside; the request stays for the genuine answer', async () => {
    const b = s.browser();
    const genuine = await answered(b, { email: 'eve@acme.test' });
    await refused(b, wrapped(genuine, 'root@acme.test', 'second'), 'signature_invalid');
    const genuine2 = await answered(b, { email: 'eve@acme.test' });
    await refused(b, wrapped(genuine2, 'root@acme.test', 'moved'), 'signature_invalid');
    assert.equal((await s.api('GET', '/users?email=root@acme.test')).json().data.length, 0);
    // A refused forgery does not use up the request: the genuine answer still signs in.
    assert.equal((await post(b, genuine2)).status, 303);
  });

  it('judges NotOnOrAfter by the injected clock (60 s skew) and refuses an expired assertion', async () => {
    const b = s.browser();
    clock.set(Date.now());
    // Answered now (valid 5 minutes); posted 6 minutes later: past NotOnOrAfter plus the skew,
    // though the request itself (10 minutes) has not expired.
    const late = await answered(b, { email: 'late@acme.test' });
    clock.advance(6 * 60_000 + 1000);
    try {
      await refused(b, late, 'assertion_expired');
    } finally {
      clock.advance(-(6 * 60_000 + 1000));
    }
    // Within the skew: 30 s after NotOnOrAfter is still accepted.
    const onTime = await answered(b, { email: 'late@acme.test' }, { ConditionsNotOnOrAfter: new Date(clock.now() - 30_000).toISOString() });
    assert.equal((await post(b, onTime)).status, 303);
    // A request not answered within 10 minutes is gone.
    const requestId = await startAt(s.browser());
    clock.advance(11 * 60_000);
    try {
      await refused(b, await idp.respond(spMetadata, requestId, { email: 'late@acme.test' }), 'request_unknown');
    } finally {
      clock.advance(-11 * 60_000);
    }
  });

  it('refuses an InResponseTo of another request: made up, of another connection, already answered, or not the signed one', async () => {
    const b = s.browser();
    const user = { email: 'trudy@acme.test' };
    await refused(b, await idp.respond(spMetadata, '_made-up-request', user), 'request_unknown');
    // A request another connection (same IdP) sent, answered to this ACS.
    const other = await samlConnection();
    const otherMetadata = await metadataOf(other);
    const theirs = await startAt(b, other, otherMetadata);
    await refused(b, await idp.respond(spMetadata, theirs, user), 'request_unknown');
    // A request already answered: a new assertion for it is refused.
    const once = await startAt(b);
    const ok1 = await post(b, await idp.respond(spMetadata, once, user));
    assert.equal(ok1.status, 303, ok1.text.replace(/[\s\S]*<body>/, '').slice(0, 800));
    await refused(b, await idp.respond(spMetadata, once, user), 'request_unknown');
    // The Response names a live request, the signed assertion another one.
    const b2 = s.browser();
    const live = await startAt(b2);
    const elsewhere = await startAt(s.browser());
    await refused(b2, await idp.respond(spMetadata, live, user, { SubjectInResponseTo: elsewhere }), 'request_unknown');
  });

  it('of two parallel posts of one response, one signs in', async () => {
    const b = s.browser();
    const response = await answered(b, { email: 'twice@acme.test' });
    const statuses = (await Promise.all([post(b, response), post(b, response)])).map((r) => r.status).sort();
    assert.deepEqual(statuses, [303, 400]);
    assert.equal((await s.api('GET', '/users?email=twice@acme.test')).json().data.length, 1);
  });

  it('links an existing user only when the organization owns the verified domain (email_conflict otherwise)', async () => {
    assert.equal((await s.api('POST', '/users', { email: 'linus@acme.test', password: 'a long password 1' })).status, 201);
    const b = s.browser();
    await refused(b, await answered(b, { email: 'linus@acme.test' }), 'email_conflict');
    assert.equal((await s.api('POST', `/organizations/${org}/domain_verification`, { method: 'manual' })).status, 200);
    const atApp = await post(b, await answered(b, { email: 'linus@acme.test' }));
    assert.equal(atApp.status, 303);
    assert.equal((await s.api('GET', '/users?email=linus@acme.test')).json().data.length, 1);
  });

  it('refuses a DTD (external entity) and an oversized response before parsing', async () => {
    const b = s.browser();
    await refused(b, withDoctype(await answered(b, { email: 'xxe@acme.test' })), 'xml_rejected');
    const huge = Buffer.from(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">${'<a/>'.repeat(70_000)}</samlp:Response>`).toString('base64');
    await refused(b, huge, 'xml_rejected');
    await refused(b, Buffer.from('not xml at all <').toString('base64'), 'xml_rejected');
    const none = await post(b, '');
    assert.equal(none.status, 400);
  });

  it('a signed response alone is refused unless the connection allows it', async () => {
    const b = s.browser();
    // The IdP signs only the Response when the SP metadata does not ask for signed assertions.
    const responseOnly = spMetadata.replace(/ WantAssertionsSigned="true"/, '');
    assert.notEqual(responseOnly, spMetadata);
    await refused(b, await idp.respond(responseOnly, await startAt(b), { email: 'grace@acme.test' }), 'signature_invalid');

    const lenient = await samlConnection({}, { allow_signed_response: true });
    const lenientMetadata = await metadataOf(lenient);
    assert.doesNotMatch(lenientMetadata, /WantAssertionsSigned="true"/);
    const signedResponse = await idp.respond(lenientMetadata, await startAt(b, lenient, lenientMetadata), { email: 'grace@acme.test' });
    assert.match(Buffer.from(signedResponse, 'base64').toString('utf8'), /<samlp:Response[^>]*>.*<saml:Issuer>[^<]*<\/saml:Issuer><ds:Signature/s);
    assert.equal((await post(b, signedResponse, lenient)).status, 303);
    // Even then, an unsigned response is refused.
    const b2 = s.browser();
    await refused(
      b2,
      unsigned(await idp.respond(lenientMetadata, await startAt(b2, lenient, lenientMetadata), { email: 'grace@acme.test' })),
      'signature_invalid',
      lenient,
    );
  });

  it('refuses a disabled connection; an unknown connection has no ACS or metadata', async () => {
    const b = s.browser();
    const disabled = await samlConnection();
    const response = await idp.respond(await metadataOf(disabled), await startAt(b, disabled, await metadataOf(disabled)), { email: 'x@acme.test' });
    assert.equal((await s.api('PATCH', `/organizations/${org}/sso/connections/${disabled}`, { enabled: false })).status, 200);
    await refused(b, response, 'connection_disabled', disabled);
    const unknown = await post(b, response, 'sso_00000000000000000000000000');
    assert.equal(unknown.status, 404);
    assert.equal((await b.get('/sso/saml/sso_00000000000000000000000000/metadata')).status, 404);
  });

  it('home-realm discovery: an email of the verified domain continues at the SAML IdP', async () => {
    const other = (await s.api('POST', '/organizations', { name: 'Initech', domain: 'initech.test' })).json().id;
    assert.equal((await s.api('POST', `/organizations/${other}/domain_verification`, { method: 'manual' })).status, 200);
    const r = await s.api('POST', `/organizations/${other}/sso/connections`, {
      protocol: 'saml',
      name: 'Initech IdP',
      saml: { metadata_xml: idp.metadataXml },
    });
    const initech = r.json().id as string;
    const initechMetadata = await metadataOf(initech);
    const b = s.browser();
    const loginPage = await b.get(await authorizeAtSp(s, b, app.client_id));
    const toIdp = await b.submit(loginPage, { email: 'milton@initech.test', password: '' });
    assert.equal(toIdp.status, 303, toIdp.text.slice(0, 300));
    const redirect = new URL(toIdp.headers.location!);
    assert.equal(redirect.origin + redirect.pathname, idp.ssoUrl);
    const requestId = await idp.requestId(redirect, initechMetadata);
    const atApp = await post(b, await idp.respond(initechMetadata, requestId, { email: 'milton@initech.test', name: 'Milton' }), initech);
    assert.equal(atApp.status, 303, atApp.text.slice(0, 300));
    const code = new URL(atApp.headers.location!).searchParams.get('code')!;
    assert.equal(decodeJwt((await redeem(code)).json().id_token).email, 'milton@initech.test');
    const members = (await s.api('GET', `/organizations/${other}/members`)).json().data;
    assert.equal(members.length, 1);
    assert.equal(members[0].role, 'member');
  });

  describe('bound to the browser that sent the AuthnRequest (login CSRF)', () => {
    const users = async (email: string) => (await s.api('GET', `/users?email=${encodeURIComponent(email)}`)).json().data as unknown[];
    const succeeded = async () => (await events('sso.login.succeeded')).length;
    /** The completion page answered the way a stranger is: 400, the words, no session cookie, `browser_mismatch` audited. */
    async function mismatch(b: Browser, path: string) {
      const before = (await failures()).length;
      const r = await b.get(path);
      assert.equal(r.status, 400, r.text.slice(0, 300));
      assert.match(r.text, /access_denied/);
      assert.match(r.text, /started in another browser/);
      assert.ok(!(r.headers['set-cookie'] ?? []).some((c) => c.startsWith('keyhall_session=')), 'no session');
      assert.deepEqual((await failures()).slice(before), ['browser_mismatch']);
    }
    async function expired(b: Browser, path: string) {
      const before = (await failures()).length;
      const r = await b.get(path);
      assert.equal(r.status, 400, r.text.slice(0, 300));
      assert.match(r.text, /access_denied/);
      assert.match(r.text, /expired or was already used/);
      assert.deepEqual((await failures()).slice(before), ['state_invalid']);
    }

    it("a response to browser A's request, posted from browser B (no cookie, or B's own), signs nobody in and is burned", async () => {
      for (const own of [false, true]) {
        const attacker = s.browser();
        const email = `mallory-${own ? 'own' : 'none'}@acme.test`;
        // The attacker answers his own AuthnRequest with his own account and makes the victim's
        // browser post it (an auto-submitting form on his page).
        const response = await answered(attacker, { email });
        const victim = s.browser();
        if (own) await startAt(victim); // the victim has a binding cookie, of another request
        const before = await succeeded();
        const acs = await postAcs(response);
        const path = completion(acs);
        assert.ok(path, `the ACS answers 303 to the completion page: ${acs.status} ${acs.headers.location}`);
        await mismatch(victim, path);
        assert.notEqual((await victim.get('/sessions')).status, 200, 'the victim is not signed in');
        assert.equal((await users(email)).length, 0, 'nobody provisioned');
        assert.equal(await succeeded(), before);
        // Burned: not even the browser that started it can use it now.
        await expired(attacker, path);
        assert.equal((await users(email)).length, 0);
      }
    });

    it("a victim's answer to a request made inside the attacker's own /authorize gives the attacker's flow nothing", async () => {
      // The attacker opens /authorize of his application and starts the SSO in his browser,
      // then sends the IdP URL to the victim, who signs in at the IdP in hers.
      const attacker = s.browser();
      const requestId = await startAt(attacker);
      const victim = s.browser();
      const response = await idp.respond(spMetadata, requestId, { email: 'victim@acme.test', name: 'Victim' });
      const before = await succeeded();
      const acs = await postAcs(response);
      const path = completion(acs);
      assert.ok(path, `${acs.status} ${acs.headers.location}`);
      await mismatch(victim, path);
      assert.equal((await users('victim@acme.test')).length, 0);
      // Even with the handle (it went to the victim's browser, but say it leaked), the attacker's
      // browser, whose cookie the request carries, gets no session and no code for the victim.
      const r = await attacker.get(path);
      assert.equal(r.status, 400);
      assert.ok(!String(r.headers.location ?? '').startsWith(REDIRECT), 'no code at the application');
      assert.equal(await succeeded(), before);
      // Before the fix the victim's post continued the attacker's flow: a code for the victim.
      assert.equal((await users('victim@acme.test')).length, 0);
    });

    it('the right browser completes; the handle is single-use, lives 2 minutes on the injected clock, and must be ours', async () => {
      const b = s.browser();
      const acs = await postAcs(await answered(b, { email: 'hopper@acme.test' }));
      const path = completion(acs)!;
      assert.match(path, /^\/sso\/saml\/sso_[^/]+\/complete\?handle=[\w-]{43}$/);
      assert.equal(acs.headers['set-cookie'], undefined, 'the ACS sets no cookie');
      const done = await b.get(path);
      assert.equal(done.status, 303, done.text.slice(0, 300));
      assert.equal(new URL(done.headers.location!).origin + new URL(done.headers.location!).pathname, REDIRECT);
      assert.equal((await b.get('/sessions')).status, 200);
      // Single use, for that browser too.
      await expired(b, path);

      // 2 minutes after the ACS the outcome is gone; just before, it still completes.
      const paths: string[] = [];
      for (const [wait, ok] of [
        [119_000, true],
        [121_000, false],
      ] as const) {
        const b2 = s.browser();
        const later = completion(await postAcs(await answered(b2, { email: 'hopper@acme.test' })))!;
        paths.push(later);
        clock.advance(wait);
        try {
          if (ok) assert.equal((await b2.get(later)).status, 303);
          else await expired(b2, later);
        } finally {
          clock.advance(-wait);
        }
      }

      // A made-up handle, none, or a handle of this connection presented at another one.
      const b3 = s.browser();
      await expired(b3, `/sso/saml/${conn}/complete?handle=${'A'.repeat(43)}`);
      await expired(b3, `/sso/saml/${conn}/complete`);
      const other = await samlConnection();
      const otherPath = completion(
        await postAcs(await idp.respond(await metadataOf(other), await startAt(b3, other, await metadataOf(other)), { email: 'hopper@acme.test' }), other),
      )!;
      await expired(b3, otherPath.replace(other, conn));
      assert.equal((await b3.get(otherPath)).status, 303, 'still good where it belongs');

      // The handles were logged nowhere (the access log has the path without the query).
      const handles = [path, ...paths, otherPath].map((p) => new URLSearchParams(p.split('?')[1]).get('handle')!);
      await sleep(100);
      const written = logs.join('');
      assert.match(written, /"url":"\/sso\/saml\/sso_[^/"]+\/complete"/);
      for (const h of handles) assert.ok(!written.includes(h), 'a handle in the log');
    });
  });
});
