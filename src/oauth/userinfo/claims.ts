/** /userinfo claims by scope (OIDC Core §5.3, §5.4). */

export interface UserInfoSource {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  /** A picture URL an upstream identity provider gave (social sign-in), when Keyhall has none of its own. */
  picture?: string | null;
  /** The user's organization memberships. */
  organizations: Array<{ id: string; role: string }>;
  /** The user's metadata, for a client's claims mapping (src/oauth/claims-mapping.ts). */
  metadata?: Record<string, unknown> | undefined;
  privateMetadata?: Record<string, unknown> | undefined;
}

/** Where the profile of a token's user comes from (src/screens/service.ts). */
export interface UserProfileSource {
  profile(tenantId: string, userId: string): Promise<UserInfoSource | undefined>;
}

/**
 * `openid` → sub; `email` → email, email_verified; `profile` → name and `orgs` (the user's
 * organization memberships, `[{id, role}]`).
 */
export function userInfoClaims(user: UserInfoSource, scopes: string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = { sub: user.id };
  if (scopes.includes('email')) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  if (scopes.includes('profile')) {
    if (user.name !== null) claims.name = user.name;
    if (user.picture) claims.picture = user.picture;
    claims.orgs = user.organizations;
  }
  return claims;
}

/**
 * The profile claims an ID token carries (OIDC Core §5.4) for the granted scopes, under the
 * tenant's `scoped` policy: `email` → email, email_verified; `profile` → name. (`orgs` is
 * Keyhall's own claim and stays at /userinfo.)
 */
export function idTokenProfileClaims(user: UserInfoSource, scopes: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scopes.includes('email')) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  if (scopes.includes('profile') && user.name !== null) claims.name = user.name;
  if (scopes.includes('profile') && user.picture) claims.picture = user.picture;
  return claims;
}

export const USERINFO_CLAIMS = ['sub', 'email', 'email_verified', 'name', 'picture', 'orgs', 'auth_time', 'nonce', 'sid'];
