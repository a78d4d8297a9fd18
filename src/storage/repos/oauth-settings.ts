import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface TenantLifetimes {
  accessTokenTtlSeconds: number | null;
  refreshTokenTtlSeconds: number | null;
}

/** Per-tenant overrides of token lifetimes (null: the configured default). */
export class OAuthSettingsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(tenantId: string): Promise<TenantLifetimes> {
    const row = await this.db.selectFrom('oauth_tenant_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return {
      accessTokenTtlSeconds: row?.access_token_ttl_seconds ?? null,
      refreshTokenTtlSeconds: row?.refresh_token_ttl_seconds ?? null,
    };
  }

  async put(tenantId: string, l: TenantLifetimes, now: number): Promise<void> {
    const values = { access_token_ttl_seconds: l.accessTokenTtlSeconds, refresh_token_ttl_seconds: l.refreshTokenTtlSeconds, updated_at: now };
    await this.db
      .insertInto('oauth_tenant_settings')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .execute();
  }
}
