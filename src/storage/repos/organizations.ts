import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';

export interface OrganizationRecord {
  id: string;
  tenantId: string;
  name: string;
  slug: string | null;
  domain: string | null;
  did: string | null;
  status: string;
  brandLogoUrl: string | null;
  brandPrimaryColor: string | null;
  brandDisplayName: string | null;
  webauthnAaguidAllowlist: string[] | null;
  createdAt: number;
  updatedAt: number;
}

type Row = Database['organizations'];
const toRecord = (r: Row): OrganizationRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  name: r.name,
  slug: r.slug,
  domain: r.domain,
  did: r.did,
  status: r.status,
  brandLogoUrl: r.brand_logo_url,
  brandPrimaryColor: r.brand_primary_color,
  brandDisplayName: r.brand_display_name,
  webauthnAaguidAllowlist: r.webauthn_aaguid_allowlist === null ? null : (JSON.parse(r.webauthn_aaguid_allowlist) as string[]),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type OrganizationPatch = Partial<
  Pick<OrganizationRecord, 'name' | 'slug' | 'domain' | 'brandLogoUrl' | 'brandPrimaryColor' | 'brandDisplayName'>
>;

export class OrganizationRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(o: OrganizationRecord): Promise<void> {
    await this.db
      .insertInto('organizations')
      .values({
        id: o.id,
        tenant_id: o.tenantId,
        name: o.name,
        slug: o.slug,
        domain: o.domain,
        did: o.did,
        status: o.status,
        brand_logo_url: o.brandLogoUrl,
        brand_primary_color: o.brandPrimaryColor,
        brand_display_name: o.brandDisplayName,
        webauthn_aaguid_allowlist: o.webauthnAaguidAllowlist === null ? null : JSON.stringify(o.webauthnAaguidAllowlist),
        created_at: o.createdAt,
        updated_at: o.updatedAt,
      })
      .execute();
  }

  async find(tenantId: string, id: string): Promise<OrganizationRecord | undefined> {
    const row = await this.db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * Reads the organization and, on PostgreSQL, holds a share lock on it until commit: whatever
   * the caller attaches to it (API keys, members, webhooks) cannot slip past a concurrent delete.
   */
  async findShared(tenantId: string, id: string, dialect: Dialect): Promise<OrganizationRecord | undefined> {
    let q = this.db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
    if (dialect === 'postgres') q = q.forShare();
    const row = await q.executeTakeFirst();
    return row && toRecord(row);
  }

  async list(tenantId: string, after: string | undefined, limit: number): Promise<OrganizationRecord[]> {
    let q = this.db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId);
    if (after) q = q.where('id', '>', after);
    const rows = await q.orderBy('id').limit(limit).execute();
    return rows.map(toRecord);
  }

  async update(tenantId: string, id: string, patch: OrganizationPatch, now: number): Promise<OrganizationRecord | undefined> {
    const set: Partial<Row> = { updated_at: now };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.slug !== undefined) set.slug = patch.slug;
    if (patch.domain !== undefined) set.domain = patch.domain;
    if (patch.brandLogoUrl !== undefined) set.brand_logo_url = patch.brandLogoUrl;
    if (patch.brandPrimaryColor !== undefined) set.brand_primary_color = patch.brandPrimaryColor;
    if (patch.brandDisplayName !== undefined) set.brand_display_name = patch.brandDisplayName;
    const row = await this.db
      .updateTable('organizations')
      .set(set)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('organizations').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
