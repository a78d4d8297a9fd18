import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { ManualClock } from '../../src/kernel/clock.js';
import { renderError } from '../../src/http/errors.js';
import { requireAccessToken } from '../../src/http/oauth/guard.js';
import { ath, makeProof, type ProofKey, proofKey } from './dpop-helpers.js';
import { basic, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

describe('DPoP server nonces (KEYHALL_DPOP_NONCE)', () => {
  const clock = new ManualClock();
  let s: OAuthTestServer;
  let auth: string;
  let key: ProofKey;
  let htu: string;
  before(async () => {
    s = await startOAuthServer({ clock, config: { dpopNonce: 'true' } });
    const c = await serviceClient(s);
    auth = basic(c.client_id, c.client_secret!);
    key = await proofKey();
    htu = `${s.issuer}/token`;
  });
  after(() => s.close());

  const iat = () => Math.floor(clock.now() / 1000);
  const token = async (nonce?: string) =>
    s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth, dpop: await makeProof(key, { htm: 'POST', htu, iat: iat(), nonce }) });

  /** Asks for a nonce the way a client learns it: from a use_dpop_nonce answer. */
  async function learnNonce(): Promise<string> {
    const r = await token();
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'use_dpop_nonce');
    const nonce = r.headers['dpop-nonce'];
    assert.equal(typeof nonce, 'string', 'a single DPoP-Nonce header');
    return nonce as string;
  }

  it('demands a nonce with 400 use_dpop_nonce and a DPoP-Nonce header, then accepts it', async () => {
    const nonce = await learnNonce();
    const r = await token(nonce);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json().token_type, 'DPoP');
  });

  it('refuses a stale nonce with use_dpop_nonce', async () => {
    const nonce = await learnNonce();
    clock.advance(11 * 60 * 1000);
    const r = await token(nonce);
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'use_dpop_nonce');
    assert.notEqual(r.headers['dpop-nonce'], nonce);
  });

  it('refuses a forged nonce', async () => {
    const nonce = await learnNonce();
    const r = await token(`${nonce.split('.')[0]}.AAAA`);
    assert.equal(r.json().error, 'use_dpop_nonce');
  });

  it("refuses another tenant's nonce", async () => {
    const b = await s.createTenant('b.localhost');
    const c = await s.server.ctx.management.clients.create(b.tenant.id, { grant_types: ['client_credentials'] });
    const bProof = (nonce?: string) => makeProof(key, { htm: 'POST', htu: `${b.tenant.issuer}/token`, iat: iat(), nonce });
    const bToken = async (nonce?: string) =>
      s.request({
        method: 'POST',
        path: '/token',
        host: 'b.localhost',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c.client_id, c.client_secret!), dpop: await bProof(nonce) },
        body: 'grant_type=client_credentials',
      });
    const bNonce = (await bToken()).headers['dpop-nonce'] as string;
    assert.equal((await bToken(bNonce)).status, 200);
    const aNonce = await learnNonce();
    const r = await bToken(aNonce);
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'use_dpop_nonce');
  });

  describe('at a resource server', () => {
    let rs: FastifyInstance;
    let url: string;
    before(async () => {
      rs = Fastify();
      rs.setErrorHandler((err, request, reply) => renderError(err, request, reply));
      rs.get('/data', { preHandler: requireAccessToken(s.server.ctx.oauth, { tenant: () => s.tenant.tenant, url: () => url }) }, async () => ({ ok: true }));
      await rs.listen({ port: 0, host: '127.0.0.1' });
      const address = rs.server.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/data`;
    });
    after(() => rs.close());

    it('answers 401 use_dpop_nonce with a DPoP challenge, then accepts the nonce', async () => {
      const at = (await token(await learnNonce())).json().access_token as string;
      const call = async (nonce?: string) =>
        fetch(url, { headers: { authorization: `DPoP ${at}`, dpop: await makeProof(key, { htm: 'GET', htu: url, iat: iat(), ath: ath(at), nonce }) } });
      const first = await call();
      assert.equal(first.status, 401);
      assert.match(first.headers.get('www-authenticate') ?? '', /^DPoP error="use_dpop_nonce"/);
      const nonce = first.headers.get('dpop-nonce');
      assert.ok(nonce);
      assert.equal((await call(nonce)).status, 200);
    });
  });
});
