import assert from 'node:assert/strict';
import { KeyObject, sign } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { type CryptoKey, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { renderError } from '../../src/http/errors.js';
import { requireAccessToken } from '../../src/http/oauth/guard.js';
import { ath, makeProof, type ProofKey, proofKey, rawJwt } from './dpop-helpers.js';
import { basic, insecure, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

const RESOURCE = 'https://rs.example/';
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('resource-server guard', () => {
  let s: OAuthTestServer;
  let rs: FastifyInstance;
  let url: string;
  let auth: string;
  let key: ProofKey;
  let bound: string;
  let bearer: string;

  before(async () => {
    s = await startOAuthServer();
    rs = Fastify();
    rs.setErrorHandler((err, request, reply) => renderError(err, request, reply));
    const guard = requireAccessToken(s.server.ctx.oauth, { tenant: () => s.tenant.tenant, resource: () => RESOURCE, url: () => url });
    rs.get('/data', { preHandler: guard }, async (request) => ({ sub: request.accessToken?.sub }));
    const scoped = requireAccessToken(s.server.ctx.oauth, { tenant: () => s.tenant.tenant, resource: () => RESOURCE, scope: 'admin', url: () => url });
    rs.get('/admin', { preHandler: scoped }, async () => ({ ok: true }));
    await rs.listen({ port: 0, host: '127.0.0.1' });
    const address = rs.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/data`;
    const c = await serviceClient(s, { allowed_resources: [RESOURCE, 'https://b.example/'] });
    auth = basic(c.client_id, c.client_secret!);
    key = await proofKey();
    const p = await makeProof(key, { htm: 'POST', htu: `${s.issuer}/token` });
    bound = (await s.post('/token', { grant_type: 'client_credentials', resource: RESOURCE }, { authorization: auth, dpop: p })).json().access_token;
    bearer = (await s.post('/token', { grant_type: 'client_credentials', resource: RESOURCE }, { authorization: auth })).json().access_token;
  });
  after(async () => {
    await rs.close();
    await s.close();
  });

  const get = (headers: Record<string, string>, path = url) => fetch(path, { headers });
  const proofFor = (token: string, claims: Record<string, unknown> = {}, k = key) => makeProof(k, { htm: 'GET', htu: url, ath: ath(token), ...claims });
  const expect401 = async (r: Response, scheme: string, error: string) => {
    assert.equal(r.status, 401);
    assert.equal(((await r.json()) as { error: string }).error, error);
    const challenge = r.headers.get('www-authenticate') ?? '';
    assert.ok(challenge.startsWith(`${scheme} `), challenge);
    assert.match(challenge, new RegExp(`error="${error}"`));
    assert.match(challenge, /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"/);
  };

  it('accepts a bound token with a proof by its key (oauth4webapi), and again with a fresh proof', async () => {
    const c = await serviceClient(s, { allowed_resources: [RESOURCE] });
    const client: oauth.Client = { client_id: c.client_id };
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const res = await oauth.clientCredentialsGrantRequest(
      s.as,
      client,
      oauth.ClientSecretBasic(c.client_secret!),
      new URLSearchParams({ resource: RESOURCE }),
      { ...insecure, DPoP },
    );
    const { access_token } = await oauth.processClientCredentialsResponse(s.as, client, res);
    for (let i = 0; i < 2; i++) {
      const r = await oauth.protectedResourceRequest(access_token, 'GET', new URL(url), new Headers(), null, { ...insecure, DPoP });
      assert.equal(r.status, 200);
      assert.equal(((await r.json()) as { sub: string }).sub, c.client_id);
    }
  });

  it('accepts the scheme in lower case', async () => {
    const r = await get({ authorization: `dpop ${bound}`, dpop: await proofFor(bound) });
    assert.equal(r.status, 200);
  });

  it('accepts an unbound token as Bearer', async () => {
    assert.equal((await get({ authorization: `Bearer ${bearer}` })).status, 200);
  });

  it('answers no token with a bare Bearer challenge', async () => {
    const r = await get({});
    assert.equal(r.status, 401);
    const challenge = r.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer resource_metadata="/);
    assert.doesNotMatch(challenge, /error=/);
  });

  it('ignores a token in the query string', async () => {
    const r = await get({}, `${url}?access_token=${bearer}`);
    assert.equal(r.status, 401);
  });

  it('refuses a bound token sent as Bearer', async () => {
    await expect401(await get({ authorization: `Bearer ${bound}` }), 'DPoP', 'invalid_token');
  });

  it('refuses an unbound token sent as DPoP', async () => {
    await expect401(await get({ authorization: `DPoP ${bearer}`, dpop: await proofFor(bearer) }), 'DPoP', 'invalid_token');
  });

  const badProofs: Array<[string, () => Promise<Record<string, string>>]> = [
    ['no proof', async () => ({})],
    ['a proof from another key', async () => ({ dpop: await proofFor(bound, {}, await proofKey()) })],
    ['a proof without ath', async () => ({ dpop: await proofFor(bound, { ath: undefined }) })],
    ['a proof with a wrong ath', async () => ({ dpop: await proofFor(bound, { ath: ath('other') }) })],
    ['a proof with a wrong htm', async () => ({ dpop: await proofFor(bound, { htm: 'POST' }) })],
    ['a proof with a wrong htu', async () => ({ dpop: await proofFor(bound, { htu: `${url}/x` }) })],
  ];
  for (const [name, make] of badProofs) {
    it(`refuses a bound token with ${name}`, async () => {
      await expect401(await get({ authorization: `DPoP ${bound}`, ...(await make()) }), 'DPoP', 'invalid_dpop_proof');
    });
  }

  it('refuses a replayed proof', async () => {
    const p = await proofFor(bound);
    assert.equal((await get({ authorization: `DPoP ${bound}`, dpop: p })).status, 200);
    await expect401(await get({ authorization: `DPoP ${bound}`, dpop: p }), 'DPoP', 'invalid_dpop_proof');
  });

  it('refuses a token for another audience', async () => {
    const other = (await s.post('/token', { grant_type: 'client_credentials', resource: 'https://b.example/' }, { authorization: auth })).json().access_token;
    await expect401(await get({ authorization: `Bearer ${other}` }), 'Bearer', 'invalid_token');
  });

  it('answers a missing scope with 403 insufficient_scope', async () => {
    const r = await get({ authorization: `Bearer ${bearer}` }, url.replace('/data', '/admin'));
    assert.equal(r.status, 403);
    assert.equal(((await r.json()) as { error: string }).error, 'insufficient_scope');
    assert.match(r.headers.get('www-authenticate') ?? '', /error="insufficient_scope", .*scope="admin"/);
  });

  describe('forged or unusable tokens: 401 invalid_token', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const claims = () => ({ iss: s.issuer, sub: 'x', aud: RESOURCE, client_id: 'x', jti: crypto.randomUUID(), iat: now(), exp: now() + 60 });
    const signed = async (payload: Record<string, unknown>, header: Record<string, unknown> = {}) => {
      const k = await s.server.ctx.keystore.activeKey(s.tenant.tenant.id, 'EdDSA');
      return new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: k.kid, ...header } as never).sign(k.privateKey);
    };
    const cases: Array<[string, () => Promise<string>]> = [
      ['alg none', async () => rawJwt({ alg: 'none', typ: 'at+jwt' }, claims())],
      [
        'HS256 keyed with the public key',
        async () => {
          const jwk = (await s.server.ctx.keystore.jwks(s.tenant.tenant.id)).keys.find((k) => k.alg === 'EdDSA')!;
          return new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: jwk.kid }).sign(new TextEncoder().encode(JSON.stringify(jwk)));
        },
      ],
      ['a jwk header naming its own key', async () => signed(claims(), { jwk: { kty: 'OKP', crv: 'Ed25519', x: 'AA' } })],
      ['a jku header', async () => signed(claims(), { jku: 'https://attacker.example/jwks' })],
      [
        'a kid of another tenant',
        async () => {
          const b = await s.createTenant('b.localhost');
          const k = await s.server.ctx.keystore.activeKey(b.tenant.id, 'EdDSA');
          return new SignJWT(claims()).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: k.kid }).sign(k.privateKey);
        },
      ],
      [
        'a tampered payload',
        async () => {
          const [h, , sig] = bearer.split('.');
          return `${h}.${Buffer.from(JSON.stringify({ ...claims(), sub: 'admin' })).toString('base64url')}.${sig}`;
        },
      ],
      ['an expired token', async () => signed({ ...claims(), iat: now() - 600, exp: now() - 60 })],
      ['a token not yet valid', async () => signed({ ...claims(), nbf: now() + 600 })],
      ['a wrong iss', async () => signed({ ...claims(), iss: 'http://b.localhost' })],
      [
        'a crit header',
        async () => {
          const k = await s.server.ctx.keystore.activeKey(s.tenant.tenant.id, 'EdDSA');
          const input = `${b64({ alg: 'EdDSA', typ: 'at+jwt', kid: k.kid, crit: ['x'], x: 1 })}.${b64(claims())}`;
          return `${input}.${sign(null, Buffer.from(input), KeyObject.from(k.privateKey as CryptoKey)).toString('base64url')}`;
        },
      ],
      ['no kid', async () => signed(claims(), { kid: undefined })],
      ['a truncated signature', async () => bearer.slice(0, -4)],
      ['an issued-in-the-future token', async () => signed({ ...claims(), iat: now() + 600 })],
      ['a token without client_id', async () => signed({ ...claims(), client_id: undefined })],
      ['an ID token (typ JWT)', async () => signed(claims(), { typ: 'JWT' })],
      [
        'a revoked token',
        async () => {
          const t = (await s.post('/token', { grant_type: 'client_credentials', resource: RESOURCE }, { authorization: auth })).json().access_token;
          assert.equal((await s.post('/revoke', { token: t }, { authorization: auth })).status, 200);
          return t;
        },
      ],
    ];
    for (const [name, make] of cases) {
      it(`refuses ${name}`, async () => {
        await expect401(await get({ authorization: `Bearer ${await make()}` }), 'Bearer', 'invalid_token');
      });
    }
  });
});
