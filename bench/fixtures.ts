/** What a bench target (bench/target.ts) hands the parent once it is set up. */
export const PASSWORD = 'correct horse battery staple';
/** The ceiling's argon2 route verifies this one. */
export const BASELINE_PASSWORD = PASSWORD;
export const REDIRECT = 'https://app.example/cb';

export interface Fixtures {
  /** Host header of the (first) tenant. */
  host: string;
  /** Basic authorization of a client_credentials client. */
  authorization: string;
  /** An access token /introspect is asked about (and a JWT for the baseline's verify). */
  introspectToken?: string;
  /** An access token of a user, with openid (for /userinfo). */
  userinfoToken?: string;
  /** One refresh token per connection; each connection rotates its own chain. */
  refreshTokens?: string[];
  /** The code flow: a confidential client and a user (email) with PASSWORD. */
  web?: { clientId: string; authorization: string; email: string };
  /** For `tenants`: host + authorization of every tenant. */
  tenants?: Array<{ host: string; authorization: string }>;
  /** Resource to name in the peer's requests. */
  resource?: string;
  opaqueResource?: string;
}
