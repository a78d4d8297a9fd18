/**
 * Logout Tokens (OpenID Connect Back-Channel Logout 1.0 §2.4): a JWT typed `logout+jwt`, signed
 * like the client's ID tokens, naming the user (`sub`) and the session (`sid`) that ended, with
 * the back-channel logout event and never a `nonce`.
 */
import { SignJWT } from 'jose';
import { newId } from '../../kernel/ids.js';
import type { IdTokenAlg } from '../id-token/sign.js';
import type { KeySource } from '../tokens/access-token.js';

export const LOGOUT_TOKEN_TYP = 'logout+jwt';
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** A logout token is used at once by its receiver: two minutes cover clock skew. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

export interface LogoutTokenInput {
  issuer: string;
  tenantId: string;
  clientId: string;
  sub: string;
  sid: string;
  alg: IdTokenAlg;
}

/** A new token (a fresh `jti`) for every attempt. */
export async function signLogoutToken(input: LogoutTokenInput, deps: { keys: KeySource; now: number }): Promise<{ token: string; jti: string }> {
  const key = await deps.keys.activeKey(input.tenantId, input.alg);
  const iat = Math.floor(deps.now / 1000);
  const jti = newId('lgt', deps.now);
  const token = await new SignJWT({ sid: input.sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } })
    .setProtectedHeader({ alg: input.alg, typ: LOGOUT_TOKEN_TYP, kid: key.kid })
    .setIssuer(input.issuer)
    .setSubject(input.sub)
    .setAudience(input.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LOGOUT_TOKEN_TTL_SECONDS)
    .setJti(jti)
    .sign(key.privateKey);
  return { token, jti };
}
