/**
 * A wallet built from the OWF client (@openid4vc/openid4vci Openid4vciClient) and an independent
 * SD-JWT VC verifier (@sd-jwt/sd-jwt-vc) that finds the issuer key at /.well-known/jwt-vc-issuer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { clientAuthenticationAnonymous, type JwtSigner, setGlobalConfig } from '@openid4vc/oauth2';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { compactVerify, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { didJwkOf, didKeyOf } from '../../src/credentials/did.js';
import type { TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';

setGlobalConfig({ allowInsecureUrls: true });

export interface HolderKey {
  alg: 'EdDSA' | 'ES256';
  publicJwk: JWK;
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  didKey: string;
  didJwk: string;
}

export async function holderKey(alg: 'EdDSA' | 'ES256' = 'EdDSA'): Promise<HolderKey> {
  const { publicKey, privateKey } = alg === 'EdDSA' ? await generateKeyPair('EdDSA', { crv: 'Ed25519' }) : await generateKeyPair('ES256');
  const publicJwk = await exportJWK(publicKey);
  return { alg, publicJwk, privateKey, didKey: didKeyOf(publicJwk), didJwk: didJwkOf(publicJwk) };
}

/** The wallet's signJwt callback: signs with the holder key whichever way the signer names it. */
function walletSigner(keys: () => HolderKey) {
  return async (signer: JwtSigner, jwt: { header: Record<string, unknown>; payload: Record<string, unknown> }) => {
    const key = keys();
    const header = { ...jwt.header, alg: signer.alg } as { alg: string };
    const token = await new SignJWT(jwt.payload).setProtectedHeader(header).sign(key.privateKey);
    return { jwt: token, signerJwk: key.publicJwk as never };
  };
}

export function wallet(key: () => HolderKey) {
  return new Openid4vciClient({
    callbacks: {
      hash: (data, alg) => createHash(alg.replace('-', '').toLowerCase()).update(data).digest(),
      generateRandom: (n) => randomBytes(n),
      signJwt: walletSigner(key) as never,
      clientAuthentication: clientAuthenticationAnonymous(),
    },
  });
}

/** A verifier that trusts the keys the issuer publishes at /.well-known/jwt-vc-issuer. */
export async function verifierFor(issuer: string) {
  const meta = (await (await fetch(`${issuer}/.well-known/jwt-vc-issuer`)).json()) as { issuer: string; jwks: { keys: JWK[] } };
  const verify = async (data: string, sig: string) => {
    const header = JSON.parse(Buffer.from(data.split('.')[0]!, 'base64url').toString()) as { kid?: string; alg: string };
    const jwk = meta.jwks.keys.find((k) => k.kid === header.kid);
    if (!jwk) return false;
    try {
      await compactVerify(`${data}.${sig}`, await importJWK(jwk, header.alg));
      return true;
    } catch {
      return false;
    }
  };
  return { meta, sdjwt: new SDJwtVcInstance({ verifier: verify, hasher: digest, hashAlg: 'sha-256' }) };
}

export interface Org {
  api: Api;
  orgId: string;
  userId: string;
  email: string;
}

/** An organization with one member (role admin). */
export async function orgWithMember(s: TestServer, api: Api = v1(s, s.tenant.platformApiKey)): Promise<Org> {
  const orgId = (await api('POST', '/organizations', { name: 'Acme Corp' })).json().id as string;
  const email = `ada-${randomBytes(4).toString('hex')}@acme.example`;
  const u = await api('POST', '/users', { email, name: 'Ada' });
  if (u.status !== 201) throw new Error(u.text);
  const userId = u.json().id as string;
  const m = await api('POST', `/organizations/${orgId}/members`, { user_id: userId, role: 'admin' });
  if (m.status !== 201) throw new Error(m.text);
  return { api, orgId, userId, email };
}

export async function membershipOffer(o: Org, txCode = true) {
  const r = await o.api('POST', `/organizations/${o.orgId}/credentials/offers`, {
    credential_configuration_id: 'OrganizationMembership',
    subject: { user_id: o.userId },
    ...(txCode ? { tx_code: { length: 6, input_mode: 'numeric' } } : {}),
  });
  if (r.status !== 201) throw new Error(r.text);
  return r.json() as { offer_id: string; credential_offer_uri: string; credential_offer_link: string; credential_offer: Record<string, unknown>; tx_code: string | null; expires_in: number };
}

/** Resolve the offer, get a token with the code (+tx_code), fetch a nonce, prove possession, receive the credential. */
export async function receiveCredential(s: TestServer, link: string, txCode: string | null, key: HolderKey, signer?: JwtSigner) {
  const w = wallet(() => key);
  const offer = await w.resolveCredentialOffer(link);
  const issuerMetadata = await w.resolveIssuerMetadata(offer.credential_issuer);
  const { accessTokenResponse } = await w.retrievePreAuthorizedCodeAccessTokenFromOffer({ credentialOffer: offer, issuerMetadata, ...(txCode ? { txCode } : {}) });
  const { c_nonce } = await w.requestNonce({ issuerMetadata });
  const configurationId = offer.credential_configuration_ids[0]!;
  const { jwt } = await w.createCredentialRequestJwtProof({
    issuerMetadata,
    credentialConfigurationId: configurationId,
    signer: signer ?? { method: 'jwk', alg: key.alg, publicJwk: key.publicJwk as never },
    nonce: c_nonce,
  });
  const res = await w.retrieveCredentials({ issuerMetadata, accessToken: accessTokenResponse.access_token, credentialConfigurationId: configurationId, proofs: { jwt: [jwt] } });
  void s;
  return { res, accessToken: accessTokenResponse.access_token, issuerMetadata, offer };
}
