/**
 * Token lifetimes per tenant: the tenant's overrides over the configured defaults, cached per
 * instance like clients (a change is seen at once here, within `ttlMs` on other instances).
 */
import { performance } from 'node:perf_hooks';
import { Lru } from '../../kernel/lru.js';

/** Which claims an ID token carries: the profile claims of the granted scopes, or only the protocol ones. */
export type IdTokenClaimsPolicy = 'scoped' | 'minimal';
export const ID_TOKEN_CLAIMS_POLICIES = ['scoped', 'minimal'] as const;

export interface OAuthSettings {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  idTokenClaims: IdTokenClaimsPolicy;
}

export interface LifetimeOverrides {
  accessTokenTtlSeconds: number | null;
  refreshTokenTtlSeconds: number | null;
  idTokenClaims: IdTokenClaimsPolicy | null;
}

export interface LifetimeStore {
  get(tenantId: string): Promise<LifetimeOverrides>;
}

export class TenantLifetimes {
  readonly #cache: Lru<string, { at: number; settings: Promise<OAuthSettings> }>;

  constructor(
    private readonly store: LifetimeStore,
    readonly defaults: OAuthSettings,
    private readonly ttlMs: number,
    maxTenants = 10_000,
  ) {
    this.#cache = new Lru(maxTenants);
  }

  /** The effective lifetimes of a tenant. */
  forTenant(tenantId: string): Promise<OAuthSettings> {
    const now = performance.now();
    const hit = this.#cache.get(tenantId);
    if (hit && now - hit.at < this.ttlMs) return hit.settings;
    const settings = this.store.get(tenantId).then((o) => ({
      accessTokenTtlSeconds: o.accessTokenTtlSeconds ?? this.defaults.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: o.refreshTokenTtlSeconds ?? this.defaults.refreshTokenTtlSeconds,
      idTokenClaims: o.idTokenClaims ?? this.defaults.idTokenClaims,
    }));
    const entry = { at: now, settings };
    this.#cache.set(tenantId, entry);
    settings.catch(() => {
      if (this.#cache.get(tenantId) === entry) this.#cache.delete(tenantId);
    });
    return settings;
  }

  invalidate(tenantId: string): void {
    this.#cache.delete(tenantId);
  }
}
