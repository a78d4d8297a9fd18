/** Per-tenant OAuth settings (`/v1/oauth/settings`); unset values fall back to the configuration. */
import { isDeepStrictEqual } from 'node:util';
import type { Actor } from '../../events/catalogue.js';
import type { TenantLifetimes } from '../../oauth/token/lifetimes.js';
import type { IdTokenClaimsPolicy } from '../../oauth/token/lifetimes.js';
import { type ManagementDeps, reposOf } from '../common.js';

export interface TokenSettingsView {
  access_token_ttl_seconds: number | null;
  refresh_token_ttl_seconds: number | null;
  id_token_claims: IdTokenClaimsPolicy | null;
  effective: { access_token_ttl_seconds: number; refresh_token_ttl_seconds: number; id_token_claims: IdTokenClaimsPolicy };
}

export interface TokenSettingsInput {
  access_token_ttl_seconds: number | null;
  refresh_token_ttl_seconds: number | null;
  /** Absent: unchanged; null: the default (`scoped`). */
  id_token_claims?: IdTokenClaimsPolicy | null | undefined;
}

export class TokenSettingsService {
  constructor(
    private readonly deps: ManagementDeps,
    private readonly lifetimes: TenantLifetimes,
  ) {}

  async get(tenantId: string): Promise<TokenSettingsView> {
    const own = await reposOf(this.deps).oauthSettings.get(tenantId);
    const d = this.lifetimes.defaults;
    return {
      access_token_ttl_seconds: own.accessTokenTtlSeconds,
      refresh_token_ttl_seconds: own.refreshTokenTtlSeconds,
      id_token_claims: own.idTokenClaims,
      effective: {
        access_token_ttl_seconds: own.accessTokenTtlSeconds ?? d.accessTokenTtlSeconds,
        refresh_token_ttl_seconds: own.refreshTokenTtlSeconds ?? d.refreshTokenTtlSeconds,
        id_token_claims: own.idTokenClaims ?? d.idTokenClaims,
      },
    };
  }

  async put(tenantId: string, input: TokenSettingsInput, actor: Actor = { type: 'system', id: null }): Promise<TokenSettingsView> {
    const own = await reposOf(this.deps).oauthSettings.get(tenantId);
    const next = {
      accessTokenTtlSeconds: input.access_token_ttl_seconds,
      refreshTokenTtlSeconds: input.refresh_token_ttl_seconds,
      idTokenClaims: input.id_token_claims === undefined ? own.idTokenClaims : input.id_token_claims,
    };
    // The same values again write nothing.
    if (!isDeepStrictEqual(next, own)) {
      const changed = (Object.keys(next) as (keyof typeof next)[]).filter((k) => next[k] !== own[k]);
      const names = {
        accessTokenTtlSeconds: 'access_token_ttl_seconds',
        refreshTokenTtlSeconds: 'refresh_token_ttl_seconds',
        idTokenClaims: 'id_token_claims',
      } as const;
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        await reposOf(this.deps, trx).oauthSettings.put(tenantId, next, this.deps.clock.now());
        await this.deps.events.record(trx, {
          tenantId,
          type: 'oauth_settings.updated',
          organizationId: null,
          actor,
          data: { changed: changed.map((k) => names[k]) },
        });
      });
      this.lifetimes.invalidate(tenantId);
    }
    return this.get(tenantId);
  }
}
