/**
 * Records and storage ports of the OAuth core. The core never imports SQL or Fastify: the
 * repositories in src/storage/repos/oauth-*.ts implement these interfaces.
 */
import type { JWK } from 'jose';
import type { AccessTokenAlg } from './tokens/jws.js';

export const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

export const GRANT_TYPE = {
  authorizationCode: 'authorization_code',
  clientCredentials: 'client_credentials',
  refreshToken: 'refresh_token',
  tokenExchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
  preAuthorizedCode: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
  deviceCode: 'urn:ietf:params:oauth:grant-type:device_code',
} as const;

/** Which subject tokens a client may exchange and which audiences it may obtain (RFC 8693). */
export interface TokenExchangePolicy {
  /** client_ids whose access tokens this client may present as subject_token (`*`: any). */
  subject_clients: string[];
  /** `audience`/`resource` values the client may obtain by exchange. */
  audiences: string[];
}

export interface ClientRecord {
  id: string;
  tenantId: string;
  clientName: string | null;
  secretHash: string | null;
  authMethod: AuthMethod;
  /**
   * Secret clients only: true when the secret must come by `authMethod` exactly; false (the
   * default) accepts `client_secret_basic` and `client_secret_post` alike (docs/oauth.md).
   */
  authMethodStrict: boolean;
  grantTypes: string[];
  redirectUris: string[];
  allowedResources: string[];
  /** Browser origins allowed to call /token, /revoke and /userinfo (CORS, docs/oauth.md). */
  allowedOrigins: string[];
  /** Scopes the client may request. */
  scopes: string[];
  jwks: { keys: JWK[] } | null;
  jwksUri: string | null;
  dpopBound: boolean;
  tokenExchange: TokenExchangePolicy | null;
  createdAt: number;
  updatedAt: number;
  secretRotatedAt: number | null;
  /**
   * A client_credentials client bound to an organization, with the role keys it holds there: its
   * tokens carry org_id, org_roles and permissions (docs/authorization.md). Absent or null: none.
   */
  organizationGrant?: ClientOrganizationGrant | null | undefined;
}

export interface ClientOrganizationGrant {
  organizationId: string;
  roles: string[];
}

/** An API that accepts this tenant's access tokens (`/v1/resource_servers`). */
export interface ResourceServerRecord {
  id: string;
  tenantId: string;
  name: string;
  /** The audience URI: the `resource`/`audience` value and the token's `aud`. */
  identifier: string;
  signingAlg: AccessTokenAlg;
  /** null: the tenant's access-token lifetime. */
  accessTokenTtlSeconds: number | null;
  /** The scopes it defines; a token for it carries only these (and OpenID scopes). */
  scopes: string[];
  /** Tokens for it must be DPoP-bound. */
  dpopRequired: boolean;
  /** The descriptions of its declared permissions (its scopes), by name. */
  permissionDescriptions: Record<string, string>;
  createdAt: number;
  updatedAt: number;
}

export interface ResourceServerStore {
  findByIdentifier(tenantId: string, identifier: string): Promise<ResourceServerRecord | undefined>;
}

export interface ClientStore {
  find(tenantId: string, clientId: string): Promise<ClientRecord | undefined>;
}

/** A refresh-token grant: the state shared by every token of one rotation chain. */
export interface RefreshFamily {
  id: string;
  tenantId: string;
  clientId: string;
  sub: string;
  scopes: string[];
  resources: string[];
  jkt: string | null;
  extra: Record<string, unknown> | null;
  generation: number;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** The organization the grant signed in to (`organization=` at /authorize); null or absent: none. */
  organizationId?: string | null;
  /** The hosted-login session whose sign-in started the family (back-channel logout ends it with the session); null or absent: none. */
  sessionId?: string | null;
}

export interface PresentedRefreshToken {
  family: RefreshFamily;
  generation: number;
  expiresAt: number;
  createdAt: number;
}

export interface RefreshTokenStore {
  /** Stores a new family and its first token (generation 0). */
  createFamily(family: RefreshFamily, tokenHash: string, tokenExpiresAt: number): Promise<void>;
  find(tenantId: string, tokenHash: string): Promise<PresentedRefreshToken | undefined>;
  /**
   * Compare-and-set: moves the family from `seenGeneration` to the next and stores the new
   * token, atomically. False when another request moved first or the family is revoked.
   */
  rotate(tenantId: string, familyId: string, seenGeneration: number, next: { tokenHash: string; createdAt: number; expiresAt: number }): Promise<boolean>;
  revokeFamily(tenantId: string, familyId: string, now: number): Promise<void>;
}

/** Single-use values (`jti`): true when this caller is the first to use `key` before `expiresAt`. */
export interface ReplayCache {
  use(tenantId: string, key: string, expiresAt: number, now: number): Promise<boolean>;
}

export interface RevokedTokenStore {
  revoke(tenantId: string, jti: string, expiresAt: number, now: number): Promise<void>;
  isRevoked(tenantId: string, jti: string): Promise<boolean>;
}

/** A client's keys published at its `jwks_uri`, fetched (and cached) through the egress policy. */
export interface RemoteKeySource {
  /** `refresh`: the cached set lacks a key; fetch again if the last fetch is old enough. */
  keys(uri: string, opts: { refresh: boolean }): Promise<{ keys: JWK[] }>;
}

/** A tenant as the OAuth core sees it. */
export interface OAuthTenant {
  id: string;
  issuer: string;
}

/** The HTTP request, reduced to what protocol checks need. */
export interface OAuthHttpRequest {
  method: string;
  /** Path of the endpoint, without query (e.g. `/token`). */
  path: string;
  /**
   * The headers protocol checks read, by lower-case name, each as the list of its values so a
   * repeated one is seen: `authorization` and `dpop` (see `oauthHeaders` in http/oauth/request.ts).
   */
  headers: Record<string, string | string[] | undefined>;
  /** Form parameters; a repeated parameter is an array. */
  body: Record<string, string | string[] | undefined>;
}
