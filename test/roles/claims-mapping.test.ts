import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { basic } from '../oauth/helpers.js';
import { callbackParams, REDIRECT, type SigninTestServer, signIn, startSigninServer } from '../signin/helpers.js';

const API = 'https://api.example/hr';

/**
 * Issue 31 point 5: users' `metadata` / `private_metadata` (size- and depth-limited JSON objects)
 * and a client's declarative claims mapping into its ID tokens, access tokens and /userinfo,
 * read by an independent verifier (jose against the published JWKS).
 */
describe('user metadata and per-client claims mapping', () => {
  let s: SigninTestServer;
  let api: Api;
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  before(async () => {
    s = await startSigninServer();
    api = v1(s, s.tenant.platformApiKey);
    jwks = createRemoteJWKSet(new URL(`${s.issuer}/.well-known/jwks.json`), { [Symbol.for('jose.allowInsecure')]: true } as never);
    assert.equal((await api('POST', '/resource_servers', { name: 'HR', identifier: API, scopes: ['hr:read'] })).status, 201);
  });
  after(() => s.close());

  it('/v1/users takes, shows and replaces metadata and private_metadata; too large, too deep or not an object is 400', async () => {
    const created = await api('POST', '/users', { email: 'meta@example.com', metadata: { department: 'R&D' }, private_metadata: { employee_no: 42 } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json().metadata, { department: 'R&D' });
    assert.deepEqual(created.json().private_metadata, { employee_no: 42 });
    const id = created.json().id as string;

    const patched = await api('PATCH', `/users/${id}`, { metadata: { team: { name: 'Core', lead: true } } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json().metadata, { team: { name: 'Core', lead: true } }, 'replaced as a whole');
    assert.deepEqual(patched.json().private_metadata, { employee_no: 42 }, 'untouched');
    const got = await api('GET', `/users/${id}`);
    assert.deepEqual(got.json().metadata, { team: { name: 'Core', lead: true } });
    const feed = await api('GET', '/events?limit=100&types=user.updated');
    assert.deepEqual(feed.json().data.at(-1).data.fields, ['metadata']);

    expectError(await api('PATCH', `/users/${id}`, { metadata: { big: 'x'.repeat(16 * 1024) } }), 400, 'invalid_request');
    expectError(await api('PATCH', `/users/${id}`, { private_metadata: { a: { b: { c: { d: { e: { f: 1 } } } } } } }), 400, 'invalid_request');
    expectError(await api('PATCH', `/users/${id}`, { metadata: ['not', 'an', 'object'] }), 400, 'invalid_request');
    expectError(await api('PATCH', `/users/${id}`, { metadata: 'x' }), 400, 'invalid_request');
    expectError(await api('POST', '/users', { email: 'meta2@example.com', private_metadata: { big: 'y'.repeat(17 * 1024) } }), 400, 'invalid_request');
    // Five levels are fine; {} clears.
    assert.equal((await api('PATCH', `/users/${id}`, { private_metadata: { a: { b: { c: { d: { e: 1 } } } } } })).status, 200);
    assert.deepEqual((await api('PATCH', `/users/${id}`, { private_metadata: {} })).json().private_metadata, {});
  });

  it('a claims mapping is refused for a reserved claim, a bad path, a repeated claim or an unknown target', async () => {
    const base = { client_name: 'M', grant_types: ['authorization_code'], redirect_uris: [REDIRECT] };
    const bad = async (claims: unknown) => {
      const r = await api('POST', '/clients', { ...base, claims });
      assert.equal(r.status, 400, r.text);
      assert.match(r.json().error, /^invalid_(request|client_metadata)$/);
    };
    for (const claim of ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'jti', 'org_id', 'permissions', 'scope', 'cnf', 'email', 'ORG_ROLES', 'client_id'])
      await bad([{ claim, from: 'metadata.x', tokens: ['id_token'] }]);
    await bad([{ claim: 'dept', from: 'metadata.constructor()', tokens: ['id_token'] }]);
    await bad([{ claim: 'dept', from: 'password_hash', tokens: ['id_token'] }]);
    await bad([{ claim: 'dept', from: 'metadata.a.b.c.d.e.f', tokens: ['id_token'] }]);
    await bad([{ claim: 'has space', from: 'name', tokens: ['id_token'] }]);
    await bad([{ claim: 'dept', from: 'name', tokens: ['refresh_token'] }]);
    await bad([{ claim: 'dept', from: 'name', tokens: [] }]);
    await bad([
      { claim: 'dept', from: 'name', tokens: ['id_token'] },
      { claim: 'dept', from: 'email', tokens: ['userinfo'] },
    ]);
    await bad(Array.from({ length: 21 }, (_, i) => ({ claim: `c${i}`, from: 'name', tokens: ['id_token'] })));
    const c = await api('POST', '/clients', { ...base, claims: [{ claim: 'https://app.example/dept', from: 'metadata.department', tokens: ['id_token'] }] });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(c.json().claims, [{ claim: 'https://app.example/dept', from: 'metadata.department', tokens: ['id_token'] }]);
    const patched = await api('PATCH', `/clients/${c.json().client_id}`, { claims: [] });
    assert.deepEqual(patched.json().claims, []);
  });

  it('mapped claims appear in the ID token, the access token (also after refresh) and /userinfo, each where the mapping says', async () => {
    const user = await s.createUser('grace@example.com', undefined, 'Grace Hopper');
    assert.equal(
      (await api('PATCH', `/users/${user.id}`, { metadata: { department: 'Navy', team: { name: 'COBOL' } }, private_metadata: { clearance: 'secret' } }))
        .status,
      200,
    );
    const claims = [
      { claim: 'department', from: 'metadata.department', tokens: ['id_token', 'access_token', 'userinfo'] },
      { claim: 'team', from: 'metadata.team.name', tokens: ['id_token'] },
      { claim: 'https://hr.example/clearance', from: 'private_metadata.clearance', tokens: ['access_token'] },
      { claim: 'mail', from: 'email', tokens: ['userinfo'] },
      { claim: 'missing', from: 'metadata.nothing.here', tokens: ['id_token', 'access_token', 'userinfo'] },
    ];
    const web = await s.webClient({ scope: 'openid offline_access hr:read', allowed_resources: [API] });
    assert.equal((await api('PATCH', `/clients/${web.client_id}`, { claims })).status, 200);

    const b = s.browser();
    const q = new URLSearchParams({
      client_id: web.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid offline_access hr:read',
      state: 's',
    });
    const login = await b.get(`/authorize?${q}`);
    const done = await signIn(b, login.headers.location!, user.email);
    const t = await s.post(
      '/token',
      { grant_type: 'authorization_code', code: callbackParams(done).get('code')!, redirect_uri: REDIRECT },
      { authorization: basic(web.client_id, web.client_secret) },
    );
    assert.equal(t.status, 200, t.text);
    const { payload: id } = await jwtVerify(t.json().id_token, jwks, { issuer: s.issuer, audience: web.client_id });
    assert.equal(id.department, 'Navy');
    assert.equal(id.team, 'COBOL');
    assert.equal(id['https://hr.example/clearance'], undefined, 'mapped to the access token only');
    assert.equal(id.missing, undefined, 'a value the user lacks leaves the claim out');
    assert.equal(id.sub, user.id);

    const { payload: at } = await jwtVerify(t.json().access_token, jwks, { issuer: s.issuer, typ: 'at+jwt' });
    assert.equal(at.department, 'Navy');
    assert.equal(at['https://hr.example/clearance'], 'secret');
    assert.equal(at.team, undefined);
    assert.equal(at.sub, user.id);

    const ui = await s.request({ method: 'GET', path: '/userinfo', headers: { authorization: `Bearer ${t.json().access_token}` } });
    assert.equal(ui.status, 200, ui.text);
    assert.equal(ui.json().department, 'Navy');
    assert.equal(ui.json().mail, user.email);
    assert.equal(ui.json().team, undefined);
    assert.equal(ui.json().sub, user.id);

    // A metadata change applies to the next access token (refresh reads the user again).
    assert.equal((await api('PATCH', `/users/${user.id}`, { private_metadata: { clearance: 'top-secret' } })).status, 200);
    const r = await s.post(
      '/token',
      { grant_type: 'refresh_token', refresh_token: t.json().refresh_token },
      { authorization: basic(web.client_id, web.client_secret) },
    );
    assert.equal(r.status, 200, r.text);
    const { payload: at2 } = await jwtVerify(r.json().access_token, jwks, { issuer: s.issuer, typ: 'at+jwt' });
    assert.equal(at2['https://hr.example/clearance'], 'top-secret');
    assert.equal(at2.department, 'Navy');
  });
});
