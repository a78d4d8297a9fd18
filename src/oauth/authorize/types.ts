/**
 * Records and storage ports of sign-in (authorization requests, flows, codes, sessions,
 * consents). Framework-free; src/storage/repos/signin-*.ts implement the ports.
 */
import type { ClaimMapping } from '../claims-mapping.js';

/** A validated authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1, RFC 7636, RFC 9126). */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  nonce: string | null;
  codeChallenge: string | null;
  prompt: string[];
  /** Seconds, or null. */
  maxAge: number | null;
  loginHint: string | null;
  resources: string[];
  /** DPoP key thumbprint the code is bound to (RFC 9449 §10). */
  dpopJkt: string | null;
  /** `organization` parameter: brands the login page and signs in to the organization (docs/authorization.md). */
  organizationId: string | null;
  /** `connection=sso_…` (Keyhall parameter): sign in at that SSO connection, skipping the login form. */
  connectionHint?: string | null;
  /** `id_token_hint` (OIDC Core §3.1.2.1): the user the client expects; checked at /authorize. */
  idTokenHint?: string | null;
  /** `acr_values` (OIDC Core §3.1.2.1) Keyhall knows, in the client's order of preference. */
  acrValues?: string[];
  /** `ui_locales` (OIDC Core §3.1.2.1): the end user's preferred languages for the hosted pages, in order. */
  uiLocales?: string[];
}

/** Sign-in settings of a client (defaults apply when none are stored). */
export interface SigninClientSettings {
  thirdParty: boolean;
  requirePar: boolean;
  idTokenAlg: 'RS256' | 'EdDSA';
  postLogoutRedirectUris: string[];
  /** OpenID Connect Back-Channel Logout 1.0 §2.2: where logout tokens are POSTed (checked by the egress policy at registration). */
  backchannelLogoutUri: string | null;
  /** The client requires `sid` in logout tokens (Keyhall always sends it). */
  backchannelLogoutSessionRequired: boolean;
  /** RFC 9101 §10.5: authorization requests only as signed request objects (`request`, at /authorize or /par). */
  requireSignedRequestObject: boolean;
  /** `fapi2`: the FAPI 2.0 Security Profile applies to this client (docs/oauth.md); null: none. */
  profile: ClientProfile | null;
  /** Extra claims from user fields and metadata (src/oauth/claims-mapping.ts); none by default. */
  claims: ClaimMapping[];
}

export const CLIENT_PROFILES = ['fapi2'] as const;
export type ClientProfile = (typeof CLIENT_PROFILES)[number];

export const DEFAULT_CLIENT_SETTINGS: SigninClientSettings = {
  thirdParty: false,
  requirePar: false,
  idTokenAlg: 'RS256',
  postLogoutRedirectUris: [],
  backchannelLogoutUri: null,
  backchannelLogoutSessionRequired: false,
  requireSignedRequestObject: false,
  profile: null,
  claims: [],
};

export interface ParRecord {
  tenantId: string;
  clientId: string;
  request: AuthorizationRequest;
  expiresAt: number;
  consumedAt: number | null;
}

export interface FlowRecord {
  tenantId: string;
  clientId: string;
  request: AuthorizationRequest;
  parHash: string | null;
  loginAfter: number | null;
  createdAt: number;
  expiresAt: number;
  completedAt: number | null;
}

/** What a code carries to /token. */
export interface CodeGrant {
  redirectUri: string;
  scopes: string[];
  nonce: string | null;
  codeChallenge: string | null;
  dpopJkt: string | null;
  resources: string[];
  /** Epoch ms of the login the code comes from. */
  authTime: number;
  sessionId: string | null;
  organizationId: string | null;
  /** RFC 8176 methods of the login (absent on codes from before MFA: a password login). */
  amr?: string[];
  /** The social connection the login came from (the ID token's `idp`). */
  idp?: string;
}

export interface CodeRecord {
  tenantId: string;
  clientId: string;
  userId: string;
  grant: CodeGrant;
  expiresAt: number;
  consumedAt: number | null;
  issuedJti: string | null;
  issuedExp: number | null;
  issuedFamily: string | null;
}

export interface SessionRecord {
  id: string;
  tenantId: string;
  userId: string;
  userAgent: string | null;
  ip: string | null;
  authTime: number;
  createdAt: number;
  lastSeenAt: number;
  idleExpiresAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** RFC 8176 authentication methods of the login (absent: a password login). */
  amr?: string[];
  /** The password was checked but the second factor is still owed: not a usable session yet. */
  mfaPending?: boolean;
  /** The organization the session last signed in to (null or absent: none). */
  organizationId?: string | null;
  /** The social connection the first factor came from (absent: none). */
  idp?: string;
  /** How the first factor was given (absent: a session from before migration 0042; see signInMethodOf). */
  method?: string;
}

export interface SigninStore {
  clientSettings(tenantId: string, clientId: string): Promise<SigninClientSettings>;
  savePar(uriHash: string, rec: ParRecord, now: number): Promise<void>;
  findPar(tenantId: string, uriHash: string): Promise<ParRecord | undefined>;
  createFlow(flowHash: string, rec: FlowRecord): Promise<void>;
  findFlow(tenantId: string, flowHash: string): Promise<FlowRecord | undefined>;
  /**
   * Consume-once: marks the flow (and its request_uri, if any) completed and stores the code, in
   * one transaction. False when the flow or its request_uri was already completed.
   */
  completeFlow(tenantId: string, flowHash: string, parHash: string | null, codeHash: string, code: CodeRecord, now: number): Promise<boolean>;
  /**
   * Consume-once of a code by its client, only while the browser session it was issued in is live;
   * returns the record either way so a reuse can be detected.
   */
  redeemCode(tenantId: string, codeHash: string, clientId: string, now: number): Promise<{ won: boolean; code: CodeRecord | undefined }>;
  recordIssued(tenantId: string, codeHash: string, issued: { jti: string; exp: number; family: string | null }): Promise<void>;
  /**
   * The client received tokens in the session (it is sent a logout token when the session ends,
   * Back-Channel Logout 1.0 §2.5); a refresh-token family it started is bound to the session.
   */
  recordSessionClient(tenantId: string, sessionId: string, clientId: string, now: number): Promise<void>;
  /** The user's remembered consent for a client (scopes and resources), or undefined when there is none. */
  consent(tenantId: string, userId: string, clientId: string): Promise<{ scopes: string[]; resources: string[] } | undefined>;
}

export interface SessionStore {
  findByToken(tenantId: string, tokenHash: string): Promise<SessionRecord | undefined>;
}
