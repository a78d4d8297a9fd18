/** The token endpoint's dependencies, grant-handler contract and response shape. */
import type { Clock } from '../../kernel/clock.js';
import type { ClientProfile } from '../authorize/types.js';
import type { DpopNonces } from '../dpop/nonce.js';
import type { VerifiedDpop } from '../dpop/verify.js';
import type { KeySource } from '../tokens/access-token.js';
import type { OAuthSettings, TenantLifetimes } from './lifetimes.js';
import type { AccessTokenPolicy } from './targets.js';
import type {
  ClientRecord,
  ClientStore,
  OAuthHttpRequest,
  OAuthTenant,
  RefreshTokenStore,
  RemoteKeySource,
  ReplayCache,
  ResourceServerStore,
  RevokedTokenStore,
} from '../types.js';

/** Audit events of the OAuth core (the acting party is the client named in `data.client_id`). */
export interface OAuthEvent {
  type: 'token.exchanged' | 'refresh_token.reused' | 'token.revoked';
  tenantId: string;
  data: Record<string, unknown>;
}

/**
 * The stores of one transaction, and the audit trail written in it: a revocation and its audit
 * row commit together or not at all.
 */
export interface OAuthUnit {
  refreshTokens: RefreshTokenStore;
  revoked: RevokedTokenStore;
  audit(event: OAuthEvent): Promise<void>;
}

/** Runs `fn` in one database transaction (src/context.ts provides it). */
export type Atomically = <T>(fn: (unit: OAuthUnit) => Promise<T>) => Promise<T>;

export interface OAuthDeps {
  clients: ClientStore;
  refreshTokens: RefreshTokenStore;
  replay: ReplayCache;
  revoked: RevokedTokenStore;
  keys: KeySource;
  clock: Clock;
  /** The configured default lifetimes; /token hands grants the tenant's own (`lifetimes`). */
  settings: OAuthSettings;
  /** Per-tenant lifetimes; without it every tenant uses `settings`. */
  lifetimes?: TenantLifetimes;
  /** Fetches keys of clients registered with `jwks_uri`. */
  remoteKeys?: RemoteKeySource;
  /** Registered resource servers (cached); without it every token is EdDSA with the tenant lifetime. */
  resourceServers?: ResourceServerStore;
  /** Set when DPoP proofs must carry a server nonce (KEYHALL_DPOP_NONCE). */
  dpopNonces?: DpopNonces;
  /** Writes that must commit together with their audit event. */
  atomically: Atomically;
  /** A client's security profile (FAPI 2.0), read at /token; without it no client has one. */
  clientProfile?: (tenantId: string, clientId: string) => Promise<ClientProfile | null>;
}

/** One /token request, as a grant sees it (its stores come from its factory). */
export interface GrantContext {
  tenant: OAuthTenant;
  client: ClientRecord;
  req: OAuthHttpRequest;
  /** The verified DPoP proof of this request, if any. */
  dpop: VerifiedDpop | undefined;
  /** The tenant's token lifetimes. */
  lifetimes: OAuthSettings;
  now: number;
  /** The signing algorithm and lifetime of a token for these resources (targets.ts). */
  tokenPolicy(target: { audience: readonly string[]; scopes: readonly string[]; jkt: string | null | undefined }): Promise<AccessTokenPolicy>;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope?: string;
  refresh_token?: string;
  id_token?: string;
  issued_token_type?: string;
}

/** One grant type; src/oauth/compose.ts builds the table from the grant factories. */
export interface ClientGrantHandler {
  anonymous?: false;
  /** Whether public (`none`) clients may use this grant. */
  publicClients: boolean;
  handle(ctx: GrantContext): Promise<TokenResponse>;
}

/** A grant without client authentication (OID4VCI pre-authorized code, anonymous access). */
export type AnonymousGrantContext = Omit<GrantContext, 'client'>;

export interface AnonymousGrantHandler {
  anonymous: true;
  handle(ctx: AnonymousGrantContext): Promise<TokenResponse>;
}

export type GrantHandler = ClientGrantHandler | AnonymousGrantHandler;

export type GrantTable = ReadonlyMap<string, GrantHandler>;
