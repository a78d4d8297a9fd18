import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createVerifier } from 'fast-jwt';
import buildGetJwks from 'get-jwks';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';
import jwksRsa from 'jwks-rsa';
import { basic, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

const API = 'https://api.example/';

describe('resource servers (/v1/resource_servers) and their access-token algorithms', () => {
  let s: OAuthTestServer;
  let headers: Record<string, string>;
  const v1 = (method: string, path: string, body?: unknown, h = headers) =>
    s.request({
      method,
      path: `/v1${path}`,
      headers: body === undefined ? { authorization: h.authorization! } : h,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  before(async () => {
    s = await startOAuthServer();
    headers = { authorization: `Bearer ${s.tenant.platformApiKey}`, 'content-type': 'application/json' };
  });
  after(() => s.close());

  async function tokenFor(alg: string, extra: Record<string, unknown> = {}) {
    const identifier = `${API}${alg.toLowerCase()}/${Math.random().toString(36).slice(2)}`;
    const created = await v1('POST', '/resource_servers', {
      name: `${alg} API`,
      identifier,
      access_token_signing_alg: alg,
      scopes: ['read', 'write'],
      ...extra,
    });
    assert.equal(created.status, 201, created.text);
    const c = await serviceClient(s, { allowed_resources: [identifier] });
    const r = await s.post(
      '/token',
      { grant_type: 'client_credentials', resource: identifier, scope: 'read' },
      { authorization: basic(c.client_id, c.client_secret!) },
    );
    assert.equal(r.status, 200, r.text);
    return { token: r.json().access_token as string, identifier, expiresIn: r.json().expires_in as number, rs: created.json(), client: c };
  }

  const jwksUri = () => `${s.issuer}/.well-known/jwks.json`;

  /** jsonwebtoken + jwks-rsa, as Express/Nest resource servers use them. */
  function verifyWithJsonwebtoken(token: string, audience: string, alg: jwt.Algorithm): Promise<jwt.JwtPayload> {
    const client = jwksRsa({ jwksUri: jwksUri(), cache: false });
    return new Promise((resolve, reject) =>
      jwt.verify(
        token,
        (header, cb) => client.getSigningKey(header.kid, (err, key) => cb(err, key?.getPublicKey())),
        { audience, issuer: s.issuer, algorithms: [alg] },
        (err, payload) => (err ? reject(err) : resolve(payload as jwt.JwtPayload)),
      ),
    );
  }

  /** fast-jwt + get-jwks, as Fastify resource servers use them. */
  async function verifyWithFastJwt(token: string, audience: string): Promise<Record<string, unknown>> {
    const getJwks = buildGetJwks({ providerDiscovery: false });
    const verify = createVerifier({
      key: async (decoded: { header: { kid?: string; alg?: string } }) =>
        getJwks.getPublicKey({ kid: decoded.header.kid, alg: decoded.header.alg, domain: s.issuer }),
      allowedAud: audience,
      allowedIss: s.issuer,
    });
    return (await verify(token)) as Record<string, unknown>;
  }

  for (const alg of ['RS256', 'ES256'] as const) {
    it(`${alg}: jsonwebtoken + jwks-rsa and fast-jwt + get-jwks verify the token against the JWKS URL, and reject a wrong aud`, async () => {
      const { token, identifier } = await tokenFor(alg);
      const header = decodeProtectedHeader(token);
      assert.equal(header.alg, alg);
      assert.equal(header.typ, 'at+jwt');
      const a = await verifyWithJsonwebtoken(token, identifier, alg);
      assert.equal(a.aud, identifier);
      assert.equal(a.scope, 'read');
      const b = await verifyWithFastJwt(token, identifier);
      assert.equal(b.aud, identifier);
      await assert.rejects(verifyWithJsonwebtoken(token, 'https://other.example/', alg), /audience invalid/);
      await assert.rejects(verifyWithFastJwt(token, 'https://other.example/'), (err: Error & { code?: string }) => err.code === 'FAST_JWT_INVALID_CLAIM_VALUE');
      const jwk = (await (await fetch(jwksUri())).json()) as { keys: Array<{ kid: string; alg: string; use: string }> };
      const published = jwk.keys.find((k) => k.kid === header.kid)!;
      assert.deepEqual({ alg: published.alg, use: published.use }, { alg, use: 'sig' });
    });
  }

  it('PS256 and the default EdDSA verify with jose; introspection and the guard accept every algorithm', async () => {
    const jwks = createRemoteJWKSet(new URL(jwksUri()), { [Symbol.for('jose.allowInsecure')]: true } as never);
    for (const alg of ['PS256', 'EdDSA', 'RS256', 'ES256']) {
      const { token, identifier, client } = await tokenFor(alg);
      const { protectedHeader } = await jwtVerify(token, jwks, { audience: identifier, issuer: s.issuer, algorithms: [alg] });
      assert.equal(protectedHeader.alg, alg);
      const info = await s.post('/introspect', { token }, { authorization: basic(client.client_id, client.client_secret!) });
      assert.equal(info.json().active, true, alg);
      assert.equal(info.json().aud, identifier);
    }
  });

  it('the resource server sets the lifetime; scopes it does not define are invalid_scope; DPoP required is enforced', async () => {
    const { expiresIn } = await tokenFor('ES256', { access_token_ttl_seconds: 120 });
    assert.equal(expiresIn, 120);
    const identifier = `${API}strict`;
    assert.equal((await v1('POST', '/resource_servers', { name: 'strict', identifier, scopes: ['read'], dpop_required: true })).status, 201);
    const c = await serviceClient(s, { allowed_resources: [identifier, `${API}plain`] });
    const auth = { authorization: basic(c.client_id, c.client_secret!) };
    const undefinedScope = await s.post('/token', { grant_type: 'client_credentials', resource: identifier, scope: 'write' }, auth);
    assert.equal(undefinedScope.status, 400);
    assert.equal(undefinedScope.json().error, 'invalid_scope');
    const noDpop = await s.post('/token', { grant_type: 'client_credentials', resource: identifier, scope: 'read' }, auth);
    assert.equal(noDpop.status, 400);
    assert.equal(noDpop.json().error, 'invalid_request');
    const several = await s.post('/token', { grant_type: 'client_credentials', resource: [identifier, `${API}plain`], scope: 'read' }, auth);
    assert.equal(several.status, 400);
    assert.equal(several.json().error, 'invalid_target');
    const plain = await s.post('/token', { grant_type: 'client_credentials', scope: 'read write' }, auth);
    assert.equal(plain.status, 200);
    assert.equal(decodeProtectedHeader(plain.json().access_token).alg, 'EdDSA', 'no resource: the EdDSA default');
  });

  it('a token whose header names another algorithm for the key, or none/HS256, is refused by introspection', async () => {
    const { token, client } = await tokenFor('RS256');
    const [h, p, sig] = token.split('.');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, unknown>;
    for (const alg of ['PS256', 'none', 'HS256']) {
      const forged = `${Buffer.from(JSON.stringify({ ...header, alg })).toString('base64url')}.${p}.${alg === 'none' ? '' : sig}`;
      const info = await s.post('/introspect', { token: forged }, { authorization: basic(client.client_id, client.client_secret!) });
      assert.deepEqual(info.json(), { active: false }, alg);
    }
  });

  it('CRUD, audit events and permissions', async () => {
    const created = await v1('POST', '/resource_servers', { name: 'Orders', identifier: `${API}orders` });
    assert.equal(created.status, 201);
    const rs = created.json();
    assert.equal(rs.access_token_signing_alg, 'EdDSA');
    assert.deepEqual(rs.scopes, []);
    assert.equal(rs.dpop_required, false);
    assert.equal(rs.access_token_ttl_seconds, null);
    assert.match(rs.id, /^rs_/);
    const got = await v1('GET', `/resource_servers/${rs.id}`);
    assert.deepEqual(got.json(), rs);
    const listed = await v1('GET', '/resource_servers?limit=100');
    assert.ok(listed.json().data.some((x: { id: string }) => x.id === rs.id));
    const patched = await v1('PATCH', `/resource_servers/${rs.id}`, { access_token_signing_alg: 'PS256', scopes: ['orders:read'] });
    assert.equal(patched.status, 200);
    assert.equal(patched.json().access_token_signing_alg, 'PS256');
    assert.equal((await v1('DELETE', `/resource_servers/${rs.id}`)).status, 204);
    assert.equal((await v1('GET', `/resource_servers/${rs.id}`)).status, 404);
    const events = await v1('GET', '/events?limit=100');
    const types = (events.json().data as Array<{ type: string }>).map((e) => e.type);
    for (const t of ['resource_server.created', 'resource_server.updated', 'resource_server.deleted']) assert.ok(types.includes(t), t);
  });

  it('bad input: status and error code', async () => {
    await v1('POST', '/resource_servers', { name: 'dup', identifier: `${API}dup` });
    const cases: Array<[string, string, unknown, number, string]> = [
      ['POST', '/resource_servers', { identifier: `${API}x` }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x' }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: 'not a uri' }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: `${API}#frag` }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: `${API}y`, access_token_signing_alg: 'HS256' }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: `${API}y`, access_token_signing_alg: 'none' }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: `${API}y`, access_token_ttl_seconds: 5 }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: `${API}y`, scopes: ['a b'] }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: `${API}y`, extra: 1 }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: 'PLACEHOLDER_ISSUER' }, 400, 'invalid_request'],
      ['POST', '/resource_servers', { name: 'x', identifier: `${API}dup` }, 409, 'conflict'],
      ['GET', '/resource_servers/rs_nope', undefined, 404, 'not_found'],
      ['GET', `/resource_servers/rs_${'0'.repeat(26)}`, undefined, 404, 'not_found'],
      ['PATCH', `/resource_servers/rs_${'0'.repeat(26)}`, { name: 'y' }, 404, 'not_found'],
      ['DELETE', `/resource_servers/rs_${'0'.repeat(26)}`, undefined, 404, 'not_found'],
    ];
    for (const [method, path, body, status, error] of cases) {
      const b = JSON.stringify(body)?.replace('PLACEHOLDER_ISSUER', s.issuer);
      const r = await v1(method, path, b === undefined ? undefined : JSON.parse(b));
      assert.equal(r.status, status, `${method} ${path} ${b}: ${r.text}`);
      assert.equal(r.json().error, error, `${method} ${path} ${b}`);
    }
    const noKey = await v1('GET', '/resource_servers', undefined, { authorization: 'Bearer sk_live_nope' });
    assert.equal(noKey.status, 401);
  });

  it('tenant isolation: another tenant neither sees the resource server nor gets its algorithm', async () => {
    const created = (await v1('POST', '/resource_servers', { name: 'iso', identifier: `${API}iso`, access_token_signing_alg: 'RS256' })).json();
    const other = await s.createTenant(`other.example:${s.port}`);
    const oh = { authorization: `Bearer ${other.platformApiKey}` };
    const host = other.tenant.host;
    const r = await s.request({ host, method: 'GET', path: `/v1/resource_servers/${created.id}`, headers: oh });
    assert.equal(r.status, 404);
    assert.equal(r.json().error, 'not_found');
    const list = await s.request({ host, method: 'GET', path: '/v1/resource_servers', headers: oh });
    assert.deepEqual(list.json().data, []);
    const patch = await s.request({
      host,
      method: 'PATCH',
      path: `/v1/resource_servers/${created.id}`,
      headers: { ...oh, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    assert.equal(patch.status, 404);
    const c = await s.server.ctx.management.clients.create(other.tenant.id, {
      grant_types: ['client_credentials'],
      scope: 'read',
      allowed_resources: [`${API}iso`],
    });
    const form = new URLSearchParams({ grant_type: 'client_credentials', resource: `${API}iso` }).toString();
    const t = await s.request({
      host,
      method: 'POST',
      path: '/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.client_id, c.client_secret!) },
      body: form,
    });
    assert.equal(t.status, 200, t.text);
    assert.equal(decodeProtectedHeader(t.json().access_token).alg, 'EdDSA', "the other tenant's registration does not apply");
  });

  it('discovery lists the access-token algorithms', async () => {
    const m = (await s.request({ method: 'GET', path: '/.well-known/openid-configuration' })).json();
    assert.deepEqual(m.access_token_signing_alg_values_supported, ['EdDSA', 'ES256', 'RS256', 'PS256']);
  });
});
