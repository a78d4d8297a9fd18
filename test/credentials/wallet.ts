/**
 * A holder wallet built from the OWF client (@openid4vc/openid4vci Openid4vciClient): resolve
 * the offer, redeem the pre-authorized code (+tx_code), fetch a nonce, prove possession of the
 * holder key, receive the credential. The library accepts only https URLs unless its process-wide
 * `allowInsecureUrls` is set, which no test process sets: an https issuer is reached in-process
 * through a fetch (helpers/http.ts fetchVia), an http one by this wallet in its own process
 * (wallet-process.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { clientAuthenticationAnonymous, type JwtSigner } from '@openid4vc/oauth2';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import { type CryptoKey, type JWK, type KeyObject, SignJWT } from 'jose';

export interface WalletKey {
  alg: 'EdDSA' | 'ES256';
  publicJwk: JWK;
  privateKey: CryptoKey | KeyObject | JWK | Uint8Array;
}

/** What the wallet received: the credential endpoint's answer (ok, or the error response). */
export interface WalletResult {
  ok: boolean;
  credentialResponse?: { credentials: Array<{ credential: string }> };
  credentialErrorResponse?: Record<string, unknown>;
}

export async function runWallet(input: { link: string; txCode: string | null; key: WalletKey; fetch?: typeof fetch }): Promise<WalletResult> {
  const { key } = input;
  const signJwt = async (signer: JwtSigner, jwt: { header: Record<string, unknown>; payload: Record<string, unknown> }) => {
    const token = await new SignJWT(jwt.payload).setProtectedHeader({ ...jwt.header, alg: signer.alg }).sign(key.privateKey as CryptoKey);
    return { jwt: token, signerJwk: key.publicJwk as never };
  };
  const w = new Openid4vciClient({
    callbacks: {
      hash: (data, alg) => createHash(alg.replace('-', '').toLowerCase()).update(data).digest(),
      generateRandom: (n) => randomBytes(n),
      signJwt: signJwt as never,
      clientAuthentication: clientAuthenticationAnonymous(),
      ...(input.fetch ? { fetch: input.fetch } : {}),
    },
  });
  const offer = await w.resolveCredentialOffer(input.link);
  const issuerMetadata = await w.resolveIssuerMetadata(offer.credential_issuer);
  const { accessTokenResponse } = await w.retrievePreAuthorizedCodeAccessTokenFromOffer({
    credentialOffer: offer,
    issuerMetadata,
    ...(input.txCode ? { txCode: input.txCode } : {}),
  });
  const { c_nonce } = await w.requestNonce({ issuerMetadata });
  const configurationId = offer.credential_configuration_ids[0]!;
  const { jwt } = await w.createCredentialRequestJwtProof({
    issuerMetadata,
    credentialConfigurationId: configurationId,
    signer: { method: 'jwk', alg: key.alg, publicJwk: key.publicJwk as never },
    nonce: c_nonce,
  });
  const res = await w.retrieveCredentials({
    issuerMetadata,
    accessToken: accessTokenResponse.access_token,
    credentialConfigurationId: configurationId,
    proofs: { jwt: [jwt] },
  });
  return res.ok
    ? { ok: true, credentialResponse: res.credentialResponse as WalletResult['credentialResponse'] }
    : {
        ok: false,
        credentialErrorResponse: (res as { credentialErrorResponse?: Record<string, unknown> }).credentialErrorResponse ?? { status: res.response.status },
      };
}
