/** The token endpoint's dependencies, grant-handler contract and response shape. */
import type { Clock } from '../../kernel/clock.js';
import type { DpopNonces } from '../dpop/nonce.js';
import type { VerifiedDpop } from '../dpop/verify.js';
import type { KeySource } from '../tokens/access-token.js';
import type { TenantLifetimes } from './lifetimes.js';
import type {
  ClientRecord,
  ClientStore,
  OAuthHttpRequest,
  OAuthTenant,
  RefreshTokenStore,
  RemoteKeySource,
  ReplayCache,
  RevokedTokenStore,
} from '../types.js';

export interface OAuthSettings {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

/** Audit events the OAuth core reports (wired to the event catalogue by its owner). */
export interface OAuthEvent {
  type: 'token.exchanged' | 'refresh_token.reused' | 'token.revoked';
  tenantId: string;
  data: Record<string, unknown>;
}

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
  /** Set when DPoP proofs must carry a server nonce (KEYHALL_DPOP_NONCE). */
  dpopNonces?: DpopNonces;
  onEvent?: (event: OAuthEvent) => void | Promise<void>;
}

export interface GrantContext {
  tenant: OAuthTenant;
  client: ClientRecord;
  req: OAuthHttpRequest;
  /** The verified DPoP proof of this request, if any. */
  dpop: VerifiedDpop | undefined;
  deps: OAuthDeps;
  now: number;
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

/** One grant type. The sign-in issue adds `authorization_code`, OID4VCI `pre-authorized_code`. */
export interface GrantHandler {
  /** Whether public (`none`) clients may use this grant. */
  publicClients: boolean;
  handle(ctx: GrantContext): Promise<TokenResponse>;
}

export type GrantTable = ReadonlyMap<string, GrantHandler>;
