/**
 * The FAPI 2.0 Security Profile as a per-client setting (`profile: "fapi2"`, docs/oauth.md): the
 * checks it adds to the existing PAR, PKCE, DPoP and client-authentication code. PAR and PKCE
 * are enforced in authorize/validate.ts, the code lifetime in authorize/engine.ts, refresh-token
 * binding in token/grants/authorization-code.ts; the rest is here.
 */
import type { ClientProfile } from './authorize/types.js';
import type { VerifiedDpop } from './dpop/verify.js';
import { oauthErrors } from './errors.js';
import type { ClientRecord } from './types.js';

/** FAPI 2.0 §5.3.2.1: authorization codes live at most 60 seconds. */
export const FAPI2_CODE_TTL_SECONDS = 60;

export const isFapi2 = (profile: ClientProfile | null | undefined): boolean => profile === 'fapi2';

/** The lifetime of a code issued to a client of this profile. */
export const codeTtlSeconds = (configured: number, profile: ClientProfile | null | undefined): number =>
  isFapi2(profile) ? Math.min(configured, FAPI2_CODE_TTL_SECONDS) : configured;

/** FAPI 2.0 §5.3.1.2: private_key_jwt (or mTLS, not offered) only; a client secret or none is `invalid_client`. */
export function checkProfileClientAuth(client: ClientRecord, profile: ClientProfile | null | undefined): void {
  if (isFapi2(profile) && client.authMethod !== 'private_key_jwt') throw oauthErrors.invalidClient('FAPI 2.0 clients authenticate with private_key_jwt only');
}

/** FAPI 2.0 §5.3.2.1: sender-constrained tokens (DPoP) only. */
export function checkProfileDpop(profile: ClientProfile | null | undefined, dpop: VerifiedDpop | undefined): void {
  if (isFapi2(profile) && !dpop) throw oauthErrors.invalidRequest('FAPI 2.0 clients must send a DPoP proof (sender-constrained tokens)');
}
