/** Per-tenant token lifetimes (`/v1/oauth/settings`); unset values fall back to the configuration. */
import type { Clock } from '../../kernel/clock.js';
import type { TenantLifetimes } from '../../oauth/token/lifetimes.js';
import type { OAuthSettingsRepo } from '../../storage/repos/oauth-settings.js';

export interface TokenSettingsView {
  access_token_ttl_seconds: number | null;
  refresh_token_ttl_seconds: number | null;
  effective: { access_token_ttl_seconds: number; refresh_token_ttl_seconds: number };
}

export class TokenSettingsService {
  constructor(
    private readonly repo: OAuthSettingsRepo,
    private readonly lifetimes: TenantLifetimes,
    private readonly clock: Clock,
  ) {}

  async get(tenantId: string): Promise<TokenSettingsView> {
    const own = await this.repo.get(tenantId);
    return {
      access_token_ttl_seconds: own.accessTokenTtlSeconds,
      refresh_token_ttl_seconds: own.refreshTokenTtlSeconds,
      effective: {
        access_token_ttl_seconds: own.accessTokenTtlSeconds ?? this.lifetimes.defaults.accessTokenTtlSeconds,
        refresh_token_ttl_seconds: own.refreshTokenTtlSeconds ?? this.lifetimes.defaults.refreshTokenTtlSeconds,
      },
    };
  }

  async put(tenantId: string, input: { access_token_ttl_seconds: number | null; refresh_token_ttl_seconds: number | null }): Promise<TokenSettingsView> {
    await this.repo.put(tenantId, { accessTokenTtlSeconds: input.access_token_ttl_seconds, refreshTokenTtlSeconds: input.refresh_token_ttl_seconds }, this.clock.now());
    this.lifetimes.invalidate(tenantId);
    return this.get(tenantId);
  }
}
