/**
 * `id_token_hint` at the end-session endpoint (OIDC RP-Initiated Logout §2): an ID token this
 * tenant issued, signature checked against its published keys; an expired hint is accepted. Other
 * JWTs of the tenant (access tokens, `typ: at+jwt`) are refused.
 */
import { createLocalJWKSet, decodeJwt, errors as joseErrors, jwtVerify } from 'jose';
import type { KeySource } from '../tokens/access-token.js';
import type { OAuthTenant } from '../types.js';
import { ID_TOKEN_ALGS } from './sign.js';

export interface IdTokenHint {
  sub: string;
  clientId: string;
  sid: string | null;
}

/** The hint's subject and client, or undefined when it is not a token of this tenant. */
export async function verifyIdTokenHint(token: string, tenant: OAuthTenant, keys: KeySource): Promise<IdTokenHint | undefined> {
  try {
    const unverified = decodeJwt(token);
    const jwks = createLocalJWKSet(await keys.jwks(tenant.id));
    // An expired ID token is still a valid hint: verify as of its own issue time.
    const at = typeof unverified.iat === 'number' ? new Date(unverified.iat * 1000 + 1000) : new Date();
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: tenant.issuer, algorithms: ID_TOKEN_ALGS, currentDate: at });
    // Our ID tokens are `typ: JWT`; an access token (`at+jwt`, RFC 9068) signed by the same keys
    // is not an ID token.
    if (protectedHeader.typ !== undefined && !/^(application\/)?jwt$/i.test(protectedHeader.typ)) return undefined;
    const aud = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
    if (typeof payload.sub !== 'string' || typeof aud !== 'string') return undefined;
    return { sub: payload.sub, clientId: aud, sid: typeof payload.sid === 'string' ? payload.sid : null };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return undefined;
    throw err;
  }
}
