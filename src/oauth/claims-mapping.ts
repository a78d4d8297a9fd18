/**
 * A client's declarative claims mapping (docs/authorization.md, "Claims mapping"): extra claims in
 * its ID tokens, access tokens and /userinfo answers, each copied from a user field or a path in
 * the user's metadata. Nothing is evaluated: a path names keys, and a missing value leaves the
 * claim out. Framework-free.
 */

export const CLAIM_TARGETS = ['id_token', 'access_token', 'userinfo'] as const;
export type ClaimTarget = (typeof CLAIM_TARGETS)[number];

export interface ClaimMapping {
  /** The claim's name in the token. */
  claim: string;
  /** A user field (`email`, `email_verified`, `name`, `picture`) or `metadata[.key…]` / `private_metadata[.key…]`. */
  from: string;
  tokens: ClaimTarget[];
}

/** What a mapping may read of a user. */
export interface MappableUser {
  email: string;
  emailVerified: boolean;
  name: string | null;
  picture?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
  privateMetadata?: Record<string, unknown> | undefined;
}

export const MAX_CLAIM_MAPPINGS = 20;
/** Keys of a metadata path: letters, digits, `_` and `-`, up to five levels. */
export const CLAIM_SOURCE = /^(?:email|email_verified|name|picture|(?:metadata|private_metadata)(?:\.[A-Za-z0-9_-]{1,64}){0,5})$/;
/** A claim name: printable ASCII without spaces (a URI such as `https://example.com/dept` is fine). */
export const CLAIM_NAME = /^[!-~]{1,200}$/;

/**
 * Claims a mapping may not set: JWT and OpenID Connect registered claims, the standard profile
 * claims Keyhall sets from the scopes, and Keyhall's own (organizations, permissions, DPoP,
 * token exchange). Compared case-insensitively.
 */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'typ',
  'cty',
  'auth_time',
  'nonce',
  'acr',
  'amr',
  'azp',
  'at_hash',
  'c_hash',
  's_hash',
  'sid',
  'scope',
  'scp',
  'client_id',
  'cnf',
  'act',
  'may_act',
  'events',
  'org_id',
  'org_roles',
  'orgs',
  'permissions',
  'roles',
  'idp',
  'email',
  'email_verified',
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'phone_number',
  'phone_number_verified',
  'address',
  'updated_at',
  'authorization_details',
]);

export const isReservedClaim = (claim: string) => RESERVED_CLAIMS.has(claim.toLowerCase());

function read(user: MappableUser, from: string): unknown {
  switch (from) {
    case 'email':
      return user.email;
    case 'email_verified':
      return user.emailVerified;
    case 'name':
      return user.name ?? undefined;
    case 'picture':
      return user.picture ?? undefined;
  }
  const [root, ...keys] = from.split('.');
  let v: unknown = (root === 'metadata' ? user.metadata : user.privateMetadata) ?? {};
  for (const k of keys) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v ?? undefined;
}

/** Whether some mapping puts a claim into `target`. */
export const mapsInto = (mappings: readonly ClaimMapping[], target: ClaimTarget) => mappings.some((m) => m.tokens.includes(target));

/** The mapped claims for `target` (a value the user does not have leaves its claim out). */
export function mappedClaims(mappings: readonly ClaimMapping[], target: ClaimTarget, user: MappableUser): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const m of mappings) {
    if (!m.tokens.includes(target)) continue;
    const v = read(user, m.from);
    if (v !== undefined) out[m.claim] = v;
  }
  return out;
}
