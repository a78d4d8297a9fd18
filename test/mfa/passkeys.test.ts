import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import {
  AuthenticatorEmulator,
  deserializeCredential,
  PasskeysCredentialsMemoryRepository,
  serializeCredential,
  WebAuthnEmulator,
} from 'nid-webauthn-emulator';
import { ManualClock } from '../../src/kernel/clock.js';
import { basic } from '../oauth/helpers.js';
import { type Browser, decodeEntities, REDIRECT, S256, type SigninTestServer, signIn, startSigninServer, VERIFIER } from '../signin/helpers.js';
import { expectError, v1 } from '../helpers/v1.js';

/** nid-webauthn-emulator always sends `none` attestation; its AAGUID is configurable. */
const EMULATOR_AAGUID = '4e49442d-4155-5448-2d33-313431353932'; // "NID-AUTH-3141592"
const OTHER_AAGUID = 'cb69481e-8ff7-4039-93ec-0a2729a154a8';

function emulator(opts: { aaguid?: string; repo?: PasskeysCredentialsMemoryRepository } = {}) {
  return new WebAuthnEmulator(
    new AuthenticatorEmulator({
      ...(opts.aaguid ? { aaguid: new Uint8Array(Buffer.from(opts.aaguid.replace(/-/g, ''), 'hex')) } : {}),
      credentialsRepository: opts.repo ?? new PasskeysCredentialsMemoryRepository(),
    }),
  );
}

const csrfOf = (html: string) => decodeEntities(/name="csrf_token" value="([^"]+)"/.exec(html)![1]!);

/**
 * Passkeys end to end over HTTP with a software authenticator: registration on /mfa (challenges
 * consumed once, bound to the browser, 5 minutes), sign-in on /login, the AAGUID allowlist, the
 * signature counter, and /v1/users/{userId}/passkeys.
 */
describe('passkeys (nid-webauthn-emulator)', () => {
  const clock = new ManualClock();
  let s: SigninTestServer;
  let origin: string;
  let web: { client_id: string; client_secret: string };
  let userId: string;
  const EMAIL = 'pk@example.com';

  before(async () => {
    s = await startSigninServer({ clock, localhost: true });
    origin = s.tenant.tenant.issuer;
    web = await s.webClient();
    userId = (await s.createUser(EMAIL)).id;
  });
  after(() => s.close());

  const events = async (type: string) =>
    (await s.request({ path: `/v1/events?types=${type}&limit=100`, headers: { authorization: `Bearer ${s.tenant.platformApiKey}` } })).json().data as Array<{
      data: Record<string, unknown>;
      organization_id: string | null;
    }>;

  /**
   * A browser freshly signed in, on /mfa; returns it with its CSRF token. A user who already has a
   * passkey signs in with it (with the password alone they would owe the second factor).
   */
  async function onMfa(email = EMAIL, passkey?: WebAuthnEmulator): Promise<{ b: Browser; csrf: string }> {
    const b = s.browser();
    let r;
    if (passkey) {
      const login = await b.get('/login?return_to=%2Fmfa');
      const csrf = csrfOf(login.text);
      r = await b.post('/login/passkey', {
        csrf_token: csrf,
        return_to: '/mfa',
        credential: JSON.stringify(passkey.getJSON(origin, await passkeyOptions(b, csrf))),
      });
    } else {
      r = await signIn(b, '/login?return_to=%2Fmfa', email);
    }
    assert.equal(r.headers.location, '/mfa', r.text.slice(0, 200));
    const page = await b.get('/mfa');
    return { b, csrf: csrfOf(page.text) };
  }

  async function register(b: Browser, csrf: string, em: WebAuthnEmulator, name = 'Laptop') {
    const options = await b.post('/mfa/passkeys/options', { csrf_token: csrf });
    assert.equal(options.status, 200, options.text);
    const response = em.createJSON(origin, options.json());
    return { options: options.json(), response, answer: await b.post('/mfa/passkeys', { csrf_token: csrf, credential: JSON.stringify(response), name }) };
  }

  /** /authorize → login page; returns the browser, the flow and its CSRF token. */
  async function loginPage() {
    const params = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await S256(VERIFIER),
      code_challenge_method: 'S256',
    });
    const b = s.browser();
    const page = await b.get((await b.get(`/authorize?${params}`)).headers.location!);
    return { b, flow: /name="flow" value="([^"]+)"/.exec(page.text)![1]!, csrf: csrfOf(page.text), page };
  }

  async function passkeyOptions(b: Browser, csrf: string) {
    const r = await b.post('/login/passkey/options', { csrf_token: csrf });
    assert.equal(r.status, 200, r.text);
    return r.json();
  }

  async function redeem(location: string) {
    const c = new URL(location).searchParams.get('code')!;
    const t = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER },
      { authorization: basic(web.client_id, web.client_secret) },
    );
    assert.equal(t.status, 200, t.text);
    return decodeJwt(t.json().id_token);
  }

  const repo = new PasskeysCredentialsMemoryRepository();
  const em = emulator({ repo });

  it('registers a passkey on /mfa (resident key preferred, UV required, none attestation without an allowlist)', async () => {
    const { b, csrf } = await onMfa();
    const { options, answer } = await register(b, csrf, em);
    assert.equal(options.rp.id, 'localhost');
    assert.equal(options.attestation, 'none');
    assert.equal(options.authenticatorSelection.residentKey, 'preferred');
    assert.equal(options.authenticatorSelection.userVerification, 'required');
    assert.equal(answer.status, 303, answer.text.slice(0, 400));
    assert.equal(answer.headers.location, '/mfa');
    const page = await b.get('/mfa');
    assert.match(page.text, /<strong>Laptop<\/strong>/);
    const registered = await events('passkey.registered');
    assert.equal(registered.length, 1);
    assert.equal(registered[0]!.data.aaguid, EMULATOR_AAGUID);
    assert.equal(registered[0]!.data.attestation_verified, false);
  });

  it('signs in with the passkey on /login (discoverable, no allowCredentials); the ID token says hwk + user + mfa, acr phr', async () => {
    const { b, flow, csrf, page } = await loginPage();
    assert.match(page.text, /autocomplete="username webauthn"/);
    assert.match(page.headers['content-security-policy'] as string, /script-src 'self'; connect-src 'self'/);
    const options = await passkeyOptions(b, csrf);
    assert.equal(options.rpId, 'localhost');
    assert.deepEqual(options.allowCredentials ?? [], []);
    assert.equal(options.userVerification, 'required');
    const assertion = em.getJSON(origin, options);
    const r = await b.post('/login/passkey', { csrf_token: csrf, flow, credential: JSON.stringify(assertion) });
    assert.equal(r.status, 303, r.text.slice(0, 400));
    assert.ok(r.headers.location!.startsWith(REDIRECT), r.headers.location);
    const claims = await redeem(r.headers.location!);
    assert.equal(claims.sub, userId);
    // The emulator flags its credentials backed up (synced): a software-secured key.
    assert.deepEqual(claims.amr, ['swk', 'user', 'mfa']);
    assert.equal(claims.acr, 'phr');
    assert.equal((await events('login.passkey')).length, 1);

    // The same assertion again (replay): the challenge was consumed.
    const replay = await b.post('/login/passkey', { csrf_token: csrf, flow, credential: JSON.stringify(assertion) });
    assert.equal(replay.status, 400, 'the flow completed: page expired');
    const fresh = await loginPage();
    const replayed = await fresh.b.post('/login/passkey', { csrf_token: fresh.csrf, flow: fresh.flow, credential: JSON.stringify(assertion) });
    assert.equal(replayed.status, 401);
    assert.match(replayed.text, /expired or was already used/);
  });

  it('refuses a challenge issued to another browser session, and one older than 5 minutes', async () => {
    const one = await loginPage();
    const two = await loginPage();
    const options = await passkeyOptions(one.b, one.csrf);
    const assertion = em.getJSON(origin, options);
    const stolen = await two.b.post('/login/passkey', { csrf_token: two.csrf, flow: two.flow, credential: JSON.stringify(assertion) });
    assert.equal(stolen.status, 401);
    assert.match(stolen.text, /expired or was already used/);

    const late = await loginPage();
    const lateOptions = await passkeyOptions(late.b, late.csrf);
    clock.advance(5 * 60_000 + 1);
    const lateAssertion = em.getJSON(origin, lateOptions);
    const expired = await late.b.post('/login/passkey', { csrf_token: late.csrf, flow: late.flow, credential: JSON.stringify(lateAssertion) });
    assert.equal(expired.status, 401);
    // The emulator's counter moved on without the server seeing it; that is a forward move, fine.
  });

  it('refuses a counter going backwards (a cloned authenticator), audits it and disables the passkey; counters that stay at 0 are fine', async () => {
    const owner = await s.createUser('cloned@example.com');
    const ownRepo = new PasskeysCredentialsMemoryRepository();
    const own = emulator({ repo: ownRepo });
    const spare = emulator({ repo: new PasskeysCredentialsMemoryRepository() });
    const enrol = await onMfa('cloned@example.com');
    assert.equal((await register(enrol.b, enrol.csrf, own, 'Phone')).answer.status, 303);
    assert.equal((await register(enrol.b, enrol.csrf, spare, 'Spare key')).answer.status, 303);
    const signInWith = async (e: WebAuthnEmulator) => {
      const p = await loginPage();
      return p.b.post('/login/passkey', { csrf_token: p.csrf, flow: p.flow, credential: JSON.stringify(e.getJSON(origin, await passkeyOptions(p.b, p.csrf))) });
    };
    const snapshot = ownRepo.loadCredentials().map((c) => serializeCredential(c));
    assert.equal((await signInWith(own)).status, 303);
    // A clone made from the earlier state signs with an older counter.
    const cloneRepo = new PasskeysCredentialsMemoryRepository();
    for (const c of snapshot) cloneRepo.saveCredential(deserializeCredential(c));
    const clone = emulator({ repo: cloneRepo });
    const refused = await signInWith(clone);
    assert.equal(refused.status, 401);
    assert.match(refused.text, /counter went backwards/);
    const regressed = await events('passkey.counter_regressed');
    assert.equal(regressed.length, 1);
    assert.equal(regressed[0]!.data.user_id, owner.id);
    assert.ok(Number(regressed[0]!.data.presented_counter) <= Number(regressed[0]!.data.stored_counter));
    // Disabled: the clone stepping past the stored counter, and the original, are refused as well.
    for (let i = 0; i < 3; i++) assert.equal((await signInWith(clone)).status, 401, `clone, try ${i + 2}`);
    const original = await signInWith(own);
    assert.equal(original.status, 401);
    assert.match(original.text, /counter went backwards/);
    assert.equal((await events('passkey.counter_regressed')).length, 1, 'recorded once');
    // The other passkey still works; /mfa shows the disabled one as such.
    const page = (await (await onMfa('cloned@example.com', spare)).b.get('/mfa')).text;
    assert.match(page, /Phone<\/strong>.*data-disabled>Disabled [^<]*may have been copied/s);
    assert.doesNotMatch(page, /Spare key<\/strong><br><small>[^<]*<\/small><br><small class="error" data-disabled/);

    // A synced passkey whose counter stays 0: every sign-in passes.
    const zeroUser = await s.createUser('zero@example.com');
    const zero = new WebAuthnEmulator(new AuthenticatorEmulator({ signCounterIncrement: 0, credentialsRepository: new PasskeysCredentialsMemoryRepository() }));
    const { b, csrf } = await onMfa('zero@example.com');
    assert.equal((await register(b, csrf, zero)).answer.status, 303);
    for (let i = 0; i < 2; i++) {
      const p = await loginPage();
      const r = await p.b.post('/login/passkey', {
        csrf_token: p.csrf,
        flow: p.flow,
        credential: JSON.stringify(zero.getJSON(origin, await passkeyOptions(p.b, p.csrf))),
      });
      assert.equal(r.status, 303, r.text.slice(0, 300));
      assert.equal((await redeem(r.headers.location!)).sub, zeroUser.id);
    }
  });

  it("refuses an AAGUID off an organization's allowlist with a message on the page and passkey.rejected; asks for direct attestation when a list applies", async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Strict' })).json().id;
    const member = await s.createUser('member@example.com');
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: member.id })).status, 201);
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [OTHER_AAGUID] })).status, 200);
    const { b, csrf } = await onMfa('member@example.com');
    const { options, answer } = await register(b, csrf, emulator({ aaguid: EMULATOR_AAGUID }));
    assert.equal(options.attestation, 'direct');
    assert.equal(answer.status, 403);
    assert.match(answer.text, /does not allow this kind of passkey/);
    assert.match(answer.text, new RegExp(EMULATOR_AAGUID));
    const rejected = await events('passkey.rejected');
    assert.equal(rejected.length, 1);
    assert.deepEqual({ ...rejected[0]!.data }, { user_id: member.id, aaguid: EMULATOR_AAGUID, organization_id: org, reason: 'aaguid_not_allowed' });
    assert.equal(rejected[0]!.organization_id, org);
    assert.doesNotMatch((await b.get('/mfa')).text, /data-passkey=/);

    // On the list (the emulator sends `none`: the AAGUID is only claimed, attestation_verified false).
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [OTHER_AAGUID, EMULATOR_AAGUID] })).status, 200);
    const allowed = await register(b, csrf, emulator({ aaguid: EMULATOR_AAGUID }));
    assert.equal(allowed.answer.status, 303, allowed.answer.text.slice(0, 300));
    // Empty list: no passkeys at all.
    assert.equal((await api('PUT', `/organizations/${org}/webauthn_policy`, { aaguid_allowlist: [] })).status, 200);
    assert.equal((await register(b, csrf, emulator({ aaguid: EMULATOR_AAGUID }))).answer.status, 403);
  });

  it('a login older than 5 minutes must be repeated before adding a passkey', async () => {
    const { b, csrf } = await onMfa(EMAIL, em);
    clock.advance(5 * 60_000 + 1);
    const options = await b.post('/mfa/passkeys/options', { csrf_token: csrf });
    expectError(options, 403, 'forbidden');
    assert.match((await b.get('/mfa')).text, /confirm it is you/);
    // Without the CSRF token: refused.
    expectError(await b.post('/mfa/passkeys/options', {}), 403, 'csrf_failed');
    expectError(await b.post('/login/passkey/options', {}), 403, 'csrf_failed');
  });

  it('lists, renames and removes passkeys on /mfa; /v1/users/{userId}/passkeys lists and deletes them without key material', async () => {
    const { b, csrf } = await onMfa(EMAIL, em);
    const page = await b.get('/mfa');
    const id = /data-passkey="(pk_[0-9a-z]+)"/.exec(page.text)![1]!;
    assert.equal((await b.post('/mfa/passkeys/rename', { csrf_token: csrf, passkey_id: id, name: 'Work <laptop>' })).status, 303);
    const renamed = await b.get('/mfa');
    assert.match(renamed.text, /<strong>Work &lt;laptop&gt;<\/strong>/);
    assert.equal((await b.post('/mfa/passkeys/rename', { csrf_token: csrf, passkey_id: 'pk_nope', name: 'x' })).status, 400);

    const api = v1(s, s.tenant.platformApiKey);
    const list = await api('GET', `/users/${userId}/passkeys`);
    assert.equal(list.status, 200, list.text);
    const item = list.json().data.find((p: { id: string }) => p.id === id);
    assert.deepEqual(Object.keys(item).sort(), ['aaguid', 'attestation_verified', 'created_at', 'disabled_at', 'id', 'last_used_at', 'name', 'transports']);
    assert.equal(item.name, 'Work <laptop>');
    assert.equal(item.disabled_at, null);
    assert.equal(item.aaguid, EMULATOR_AAGUID);
    expectError(await api('GET', '/users/user_00000000000000000000000000/passkeys'), 404, 'not_found');
    expectError(await api('DELETE', `/users/${userId}/passkeys/pk_00000000000000000000000000`), 404, 'not_found');
    expectError(await api('DELETE', `/users/${userId}/passkeys/not-an-id`), 404, 'not_found');
    const orgKey = (
      await api('POST', `/organizations/${(await api('POST', '/organizations', { name: 'K' })).json().id}/api_keys`, { name: 'k', scopes: ['users:write'] })
    ).json().key;
    expectError(await v1(s, orgKey)('GET', `/users/${userId}/passkeys`), 403, 'forbidden');
    const reader = (await api('POST', '/api_keys', { name: 'r', scopes: ['users:read'] })).json().key;
    expectError(await v1(s, reader)('DELETE', `/users/${userId}/passkeys/${id}`), 403, 'insufficient_scope');

    // Removing needs a fresh login: this one is.
    assert.equal((await b.post('/mfa/passkeys/remove', { csrf_token: csrf, passkey_id: id })).status, 303);
    assert.doesNotMatch((await b.get('/mfa')).text, new RegExp(id));
    const removed = await events('passkey.removed');
    assert.equal(removed.at(-1)!.data.passkey_id, id);
    // The removed passkey no longer signs in.
    const p = await loginPage();
    const r = await p.b.post('/login/passkey', {
      csrf_token: p.csrf,
      flow: p.flow,
      credential: JSON.stringify(em.getJSON(origin, await passkeyOptions(p.b, p.csrf))),
    });
    assert.equal(r.status, 401);
  });
});
