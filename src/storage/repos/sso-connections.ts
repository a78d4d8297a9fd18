import type { Kysely } from 'kysely';
import { bool, cast, codec, json } from '../codec.js';
import type { Database } from '../schema.js';

export type SsoProtocol = 'oidc';

/** The upstream's authorization server metadata, as discovered (RFC 8414 / OIDC Discovery). */
export type UpstreamMetadata = Record<string, unknown> & { issuer: string };

/** Public settings of an OIDC connection (the client secret is stored apart, encrypted). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  scopes: string[];
  pkce: boolean;
  /** Which ID-token claim carries each attribute. */
  claims: { email: string; name: string; groups: string };
  /** The ID-token algorithm chosen from the upstream's own list (never `none`, never HS*). */
  idTokenAlg: string;
  /** client_secret_basic | client_secret_post | none */
  tokenAuthMethod: string;
  metadata: UpstreamMetadata;
}

export interface SsoConnectionRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  protocol: SsoProtocol;
  name: string;
  enabled: boolean;
  defaultRole: string;
  /** upstream group (lower case) → organization role. */
  groupRoles: Record<string, string>;
  config: OidcSettings;
  secretEnc: string | null;
  createdAt: number;
  updatedAt: number;
}

const stored = codec<SsoConnectionRecord>()('sso_connections', {
  id: true,
  tenantId: true,
  organizationId: true,
  protocol: cast<SsoProtocol>(),
  name: true,
  enabled: bool,
  defaultRole: true,
  groupRoles: json<Record<string, string>>(),
  config: json<OidcSettings>(),
  secretEnc: true,
  createdAt: true,
  updatedAt: true,
});

const PATCHABLE = ['name', 'enabled', 'defaultRole', 'groupRoles', 'config', 'secretEnc'] as const;
export type SsoConnectionPatch = Partial<Pick<SsoConnectionRecord, (typeof PATCHABLE)[number]>>;

export class SsoConnectionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(c: SsoConnectionRecord): Promise<void> {
    await this.db.insertInto('sso_connections').values(stored.toRow(c)).execute();
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<SsoConnectionRecord | undefined> {
    const row = await this.db
      .selectFrom('sso_connections')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** A connection by id alone within the tenant (the sign-in callback knows no organization). */
  async findInTenant(tenantId: string, id: string): Promise<SsoConnectionRecord | undefined> {
    const row = await this.db.selectFrom('sso_connections').selectAll().where((eb) => eb.and({ tenant_id: tenantId, id })).executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async listByOrganization(tenantId: string, organizationId: string): Promise<SsoConnectionRecord[]> {
    const rows = await this.db
      .selectFrom('sso_connections')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }))
      .orderBy('id')
      .execute();
    return rows.map(stored.toRecord);
  }

  async update(tenantId: string, organizationId: string, id: string, patch: SsoConnectionPatch, now: number): Promise<SsoConnectionRecord | undefined> {
    const row = await this.db
      .updateTable('sso_connections')
      .set({ updated_at: now, ...stored.toPatch(patch, PATCHABLE) })
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async delete(tenantId: string, organizationId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('sso_connections').where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id })).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
