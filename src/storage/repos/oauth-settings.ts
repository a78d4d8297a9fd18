import type { Kysely } from 'kysely';
import type { IdTokenClaimsPolicy } from '../../oauth/token/lifetimes.js';
import { codec, field } from '../codec.js';
import type { Database } from '../schema.js';

export interface TenantLifetimes {
  accessTokenTtlSeconds: number | null;
  refreshTokenTtlSeconds: number | null;
  idTokenClaims: IdTokenClaimsPolicy | null;
}

const policy = field<IdTokenClaimsPolicy | null, string | null>(
  (v) => (v as IdTokenClaimsPolicy | null) ?? null,
  (v) => v,
);
const stored = codec<TenantLifetimes>()('oauth_tenant_settings', { accessTokenTtlSeconds: true, refreshTokenTtlSeconds: true, idTokenClaims: policy });

/** Per-tenant OAuth settings: token lifetimes and the ID-token claim policy (null: the default). */
export class OAuthSettingsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(tenantId: string): Promise<TenantLifetimes> {
    const row = await this.db.selectFrom('oauth_tenant_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return row ? stored.toRecord(row) : { accessTokenTtlSeconds: null, refreshTokenTtlSeconds: null, idTokenClaims: null };
  }

  async put(tenantId: string, l: TenantLifetimes, now: number): Promise<void> {
    const values = { ...stored.toRow(l), updated_at: now };
    await this.db
      .insertInto('oauth_tenant_settings')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .execute();
  }
}
