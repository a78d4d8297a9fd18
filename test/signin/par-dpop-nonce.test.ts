import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint } from 'jose';
import { basic } from '../oauth/helpers.js';
import { makeProof, type ProofKey, proofKey } from '../oauth/dpop-helpers.js';
import { REDIRECT, S256, type SigninTestServer, startSigninServer, VERIFIER } from './helpers.js';

/** Security review 2, finding 5: /par demands the DPoP server nonce like /token (KEYHALL_DPOP_NONCE). */
describe('/par with DPoP server nonces', () => {
  let s: SigninTestServer;
  let web: { client_id: string; client_secret: string };
  let key: ProofKey;
  let challenge: string;
  before(async () => {
    s = await startSigninServer({ config: { dpopNonce: 'true' } });
    web = await s.webClient();
    key = await proofKey();
    challenge = await S256(VERIFIER);
  });
  after(() => s.close());

  const push = async (nonce?: string) =>
    s.post(
      '/par',
      {
        response_type: 'code',
        client_id: web.client_id,
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      { authorization: basic(web.client_id, web.client_secret), dpop: await makeProof(key, { htm: 'POST', htu: `${s.issuer}/par`, nonce }) },
    );

  it('answers a proof without a nonce with 400 use_dpop_nonce and a DPoP-Nonce header, then accepts the nonce', async () => {
    const first = await push();
    assert.equal(first.status, 400, first.text);
    assert.equal(first.json().error, 'use_dpop_nonce');
    const nonce = first.headers['dpop-nonce'];
    assert.equal(typeof nonce, 'string');
    const ok = await push(nonce as string);
    assert.equal(ok.status, 201, ok.text);
    assert.match(ok.json().request_uri, /^urn:ietf:params:oauth:request_uri:/);
  });

  it('refuses a forged nonce', async () => {
    const nonce = (await push()).headers['dpop-nonce'] as string;
    const r = await push(`${nonce.split('.')[0]}.AAAA`);
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'use_dpop_nonce');
  });

  it('still binds the pushed request to the proof key once the nonce is given', async () => {
    const nonce = (await push()).headers['dpop-nonce'] as string;
    const r = await s.post(
      '/par',
      {
        response_type: 'code',
        client_id: web.client_id,
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        dpop_jkt: await calculateJwkThumbprint(key.jwk),
      },
      { authorization: basic(web.client_id, web.client_secret), dpop: await makeProof(key, { htm: 'POST', htu: `${s.issuer}/par`, nonce }) },
    );
    assert.equal(r.status, 201, r.text);
  });
});
