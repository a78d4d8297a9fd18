import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { createEgressAgent } from '../../src/egress/agent.js';
import { parseEgressAllowlist } from '../../src/egress/policy.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { idTokenAlgorithms, newRoundTrip, UpstreamClient, UpstreamError, type UpstreamProvider } from '../../src/upstream/client.js';
import { FieldPathError, readFieldPath, readProfile } from '../../src/upstream/profile.js';

/**
 * A scripted upstream on 127.0.0.1: its token endpoint answers with an ID token whose claims,
 * algorithm and key each test sets, signed with keys it publishes at /jwks (or with a key it does
 * not publish); /userinfo answers with a generic provider's JSON.
 */
describe('upstream client: ID token, RFC 9207 iss and userinfo checks', () => {
  let server: http.Server;
  let base: string;
  const policy = parseEgressAllowlist('127.0.0.1/32');
  const agent = createEgressAgent(policy);
  const clock = new ManualClock();
  const client = new UpstreamClient({ agent, policy, timeoutMs: 5_000 }, clock);
  const keys: Record<'rs' | 'es' | 'rogue', { privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']; jwk: JWK }> = {} as never;
  /** What the next token answer's ID token is: claims over the defaults, the signing key and alg. */
  let idToken: { claims?: Record<string, unknown>; key?: 'rs' | 'es' | 'rogue'; alg?: string; omit?: string[] } = {};
  let userinfo: unknown = {};
  let lastTokenRequest = new URLSearchParams();

  before(async () => {
    for (const [name, alg] of [
      ['rs', 'RS256'],
      ['es', 'ES256'],
      ['rogue', 'RS256'],
    ] as const) {
      const pair = await generateKeyPair(alg, { extractable: true });
      keys[name] = { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid: name === 'rogue' ? 'rs' : name, alg } };
    }
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', async () => {
        if (req.url === '/jwks') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [keys.rs.jwk, keys.es.jwk] }));
        if (req.url === '/userinfo') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(userinfo));
        if (req.url !== '/token') return res.writeHead(404).end();
        lastTokenRequest = new URLSearchParams(body);
        const now = Math.floor(clock.now() / 1000);
        const claims: Record<string, unknown> = { iss: base, aud: 'rp', sub: 'user-1', iat: now, exp: now + 300, nonce: 'n-1', ...idToken.claims };
        for (const c of idToken.omit ?? []) delete claims[c];
        const key = keys[idToken.key ?? 'rs'];
        const alg = idToken.alg ?? (idToken.key === 'es' ? 'ES256' : 'RS256');
        const jwt = await new SignJWT(claims).setProtectedHeader({ alg, kid: key.jwk.kid! }).sign(key.privateKey);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'at-1', token_type: 'Bearer', expires_in: 60, id_token: jwt }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const provider = (extra: Partial<UpstreamProvider> = {}): UpstreamProvider => ({
    issuer: base,
    authorizationEndpoint: `${base}/authorize`,
    tokenEndpoint: `${base}/token`,
    revocationEndpoint: null,
    userinfoEndpoint: `${base}/userinfo`,
    jwksUri: `${base}/jwks`,
    clientId: 'rp',
    tokenEndpointAuthMethod: 'client_secret_basic',
    issParameterSupported: true,
    idTokenAlgs: ['RS256'],
    ...extra,
  });
  const trip = { state: 's-1', nonce: 'n-1', codeVerifier: 'v'.repeat(43) };
  const callback = (params: Record<string, string>) => new URLSearchParams({ code: 'c-1', state: 's-1', ...params });
  const exchange = (p: UpstreamProvider, params: URLSearchParams, t = trip) =>
    client.exchangeCode(p, 'secret', params, { redirectUri: 'https://rp.example/cb', trip: t });

  async function refused(kind: UpstreamError['kind'], promise: Promise<unknown>, message: RegExp) {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof UpstreamError, String(err));
      assert.equal(err.kind, kind, err.message);
      assert.match(err.message, message);
      return true;
    });
  }

  it('accepts a genuine answer: the claims, the subject, the PKCE verifier sent', async () => {
    idToken = {};
    const tokens = await exchange(provider(), callback({ iss: base }));
    assert.equal(tokens.subject, 'user-1');
    assert.equal(tokens.idTokenClaims?.nonce, 'n-1');
    assert.equal(tokens.accessToken, 'at-1');
    assert.equal(lastTokenRequest.get('code_verifier'), trip.codeVerifier);
    assert.equal(lastTokenRequest.get('redirect_uri'), 'https://rp.example/cb');
  });

  it('refuses an ID token of another issuer', async () => {
    idToken = { claims: { iss: 'https://evil.example' } };
    await refused('invalid_response', exchange(provider(), callback({ iss: base })), /"iss"/);
  });

  it('refuses an ID token for another audience', async () => {
    idToken = { claims: { aud: 'someone-else' } };
    await refused('invalid_response', exchange(provider(), callback({ iss: base })), /"aud"/);
  });

  it('refuses a wrong or a missing nonce', async () => {
    idToken = { claims: { nonce: 'n-other' } };
    await refused('invalid_response', exchange(provider(), callback({ iss: base })), /nonce/);
    idToken = { omit: ['nonce'] };
    await refused('invalid_response', exchange(provider(), callback({ iss: base })), /nonce/);
  });

  it('refuses an expired ID token, by the injected clock', async () => {
    idToken = { claims: { exp: Math.floor(clock.now() / 1000) - 3600 } };
    await refused('invalid_response', exchange(provider(), callback({ iss: base })), /exp/);
  });

  it('accepts only algorithms the upstream metadata lists', async () => {
    idToken = { key: 'es' };
    await refused('invalid_response', exchange(provider({ idTokenAlgs: ['RS256'] }), callback({ iss: base })), /"alg"/);
    assert.equal((await exchange(provider({ idTokenAlgs: ['ES256'] }), callback({ iss: base }))).subject, 'user-1');
    assert.deepEqual(idTokenAlgorithms({ id_token_signing_alg_values_supported: ['none', 'HS256', 'ES256', 'RS256'] }), ['RS256', 'ES256']);
    assert.deepEqual(idTokenAlgorithms({}), ['RS256'], "OIDC Discovery's default");
    assert.deepEqual(idTokenAlgorithms({ id_token_signing_alg_values_supported: ['HS256', 'none'] }), []);
  });

  it("refuses an ID token not signed by the upstream's published keys", async () => {
    idToken = { key: 'rogue' };
    await refused('invalid_response', exchange(provider(), callback({ iss: base })), /signature/);
  });

  it('RFC 9207: refuses a missing iss when the upstream advertises it, and a mismatched one always', async () => {
    idToken = {};
    await refused('invalid_callback', exchange(provider(), callback({})), /"iss" \(issuer\) missing/);
    await refused('invalid_callback', exchange(provider(), callback({ iss: 'https://evil.example' })), /unexpected "iss"/);
    await refused('invalid_callback', exchange(provider({ issParameterSupported: false }), callback({ iss: 'https://evil.example' })), /unexpected "iss"/);
    assert.equal((await exchange(provider({ issParameterSupported: false }), callback({}))).subject, 'user-1', 'not advertised: may be absent');
  });

  it('refuses a state that is not the round trip’s, and reports an upstream error as denied', async () => {
    await refused('invalid_callback', exchange(provider(), callback({ iss: base, state: 's-other' })), /state/);
    await refused('denied', exchange(provider(), new URLSearchParams({ error: 'access_denied', state: 's-1', iss: base })), /access_denied/);
  });

  it('builds the authorization URL with state, nonce and an S256 challenge', async () => {
    const t = newRoundTrip({ pkce: true, nonce: true });
    assert.match(t.state, /^[A-Za-z0-9_-]{43}$/);
    const url = new URL(
      await client.authorizationUrl(provider(), { redirectUri: 'https://rp.example/cb', scopes: ['openid', 'email'], trip: t, params: { prompt: 'login' } }),
    );
    const q = url.searchParams;
    assert.deepEqual(
      [q.get('response_type'), q.get('client_id'), q.get('state'), q.get('nonce'), q.get('code_challenge_method'), q.get('scope'), q.get('prompt')],
      ['code', 'rp', t.state, t.nonce, 'S256', 'openid email', 'login'],
    );
    assert.match(q.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    const plain = newRoundTrip({ pkce: false, nonce: false });
    const noExtras = new URL(await client.authorizationUrl(provider(), { redirectUri: 'https://rp.example/cb', scopes: [], trip: plain })).searchParams;
    assert.equal(noExtras.get('nonce'), null);
    assert.equal(noExtras.get('code_challenge'), null);
  });

  it("reads a generic OAuth 2.0 provider's subject and email by declared field paths", async () => {
    userinfo = {
      id: 583231,
      login: 'octocat',
      emails: [{ value: 'octo@example.com', verified: true }, { value: 'other@example.com' }],
      profile: { name: 'The Octocat' },
    };
    const doc = await client.userinfo(provider(), 'at-1');
    assert.deepEqual(readProfile(doc, { subject: 'id', email: 'emails[0].value', emailVerified: 'emails[0].verified', name: 'profile.name' }), {
      subject: '583231',
      email: 'octo@example.com',
      emailVerified: true,
      name: 'The Octocat',
    });
    assert.deepEqual(readProfile(doc, { subject: 'user.id', email: 'emails[5].value' }), { subject: null, email: null, emailVerified: false, name: null });
    userinfo = ['not', 'an', 'object'];
    await refused('invalid_response', client.userinfo(provider(), 'at-1'), /JSON object/);
  });

  it('checks the OIDC userinfo subject against the ID token', async () => {
    userinfo = { sub: 'user-2', email: 'x@example.com' };
    await refused('invalid_response', client.userinfo(provider(), 'at-1', 'user-1'), /sub/);
    userinfo = { sub: 'user-1', email: 'x@example.com' };
    assert.equal((await client.userinfo(provider(), 'at-1', 'user-1')).email, 'x@example.com');
  });
});

describe('field paths', () => {
  it('read names, nested names and indexes; own properties only', () => {
    const doc = { a: { b: [{ c: 1 }, { c: 2 }] }, list: [[5, 6]] };
    assert.equal(readFieldPath(doc, 'a.b[1].c'), 2);
    assert.equal(readFieldPath(doc, 'list[0][1]'), 6);
    assert.equal(readFieldPath(doc, 'a.b[2].c'), undefined);
    assert.equal(readFieldPath(doc, 'a.missing.c'), undefined);
    assert.equal(readFieldPath(doc, 'constructor'), undefined);
    assert.equal(readFieldPath(doc, '__proto__'), undefined);
  });

  it('refuse what is not a path', () => {
    for (const bad of ['', 'a..b', 'a[x]', 'a.[0]', 'a b', '[0]']) assert.throws(() => readFieldPath({}, bad), FieldPathError, bad);
  });
});
