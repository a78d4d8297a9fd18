/** JWT access tokens (RFC 9068), signed with the tenant's active key of the resource server's algorithm (EdDSA by default). */
import { randomBase64url } from '../../kernel/ids.js';
import type { ActiveKey, SigningAlg } from '../../kernel/crypto/keystore.js';
import type { OAuthTenant } from '../types.js';
import { type AccessTokenAlg, signJwt } from './jws.js';

export const AT_TYP = 'at+jwt';

/**
 * The claim of a token issued by the pre-authorized code grant (OID4VCI): the offer it redeemed.
 * Such a token is accepted only at the credential endpoint, and no other token is accepted there.
 */
export const CREDENTIAL_OFFER_CLAIM = 'credential_offer_id';

/** What the core needs from the keystore (src/kernel/crypto/keystore.ts). */
export interface KeySource {
  activeKey(tenantId: string, alg: SigningAlg): Promise<ActiveKey>;
  jwks(tenantId: string): Promise<{ keys: import('jose').JWK[] }>;
}

/** RFC 8693 §4.1 actor: who acts for the subject; `act` nests prior actors. */
export interface Actor {
  sub: string;
  client_id?: string;
  act?: Actor;
}

export interface AccessTokenInput {
  sub: string;
  clientId: string;
  scopes: string[];
  /** The resource indicators (RFC 8707); empty means the tenant's default audience (its issuer). */
  audience: string[];
  jkt?: string | null;
  act?: Actor | undefined;
  ttlSeconds: number;
  /** The resource server's algorithm; default EdDSA. */
  alg?: AccessTokenAlg | undefined;
  /** The credential offer a pre-authorized code grant redeemed (CREDENTIAL_OFFER_CLAIM). */
  credentialOffer?: string | undefined;
  /** Organization claims (org_id, org_roles, permissions: src/oauth/organization.ts). */
  organization?: Record<string, unknown> | undefined;
  /** The client's mapped claims (src/oauth/claims-mapping.ts); registered claims always win. */
  mapped?: Record<string, unknown> | undefined;
}

export interface IssuedAccessToken {
  token: string;
  jti: string;
  expiresIn: number;
  tokenType: 'Bearer' | 'DPoP';
}

export async function issueAccessToken(tenant: OAuthTenant, input: AccessTokenInput, deps: { keys: KeySource; now: number }): Promise<IssuedAccessToken> {
  const alg = input.alg ?? 'EdDSA';
  const key = await deps.keys.activeKey(tenant.id, alg);
  const iat = Math.floor(deps.now / 1000);
  const jti = randomBase64url(16);
  const aud = input.audience.length === 0 ? tenant.issuer : input.audience.length === 1 ? input.audience[0]! : input.audience;
  const claims: Record<string, unknown> = { ...input.mapped, ...input.organization, client_id: input.clientId, jti };
  if (input.scopes.length > 0) claims.scope = input.scopes.join(' ');
  if (input.jkt) claims.cnf = { jkt: input.jkt };
  if (input.act) claims.act = input.act;
  if (input.credentialOffer) claims[CREDENTIAL_OFFER_CLAIM] = input.credentialOffer;
  const payload = { iss: tenant.issuer, sub: input.sub, aud, iat, exp: iat + input.ttlSeconds, ...claims };
  const token = signJwt({ alg, typ: AT_TYP, kid: key.kid }, payload, key.privateKey);
  return { token, jti, expiresIn: input.ttlSeconds, tokenType: input.jkt ? 'DPoP' : 'Bearer' };
}
