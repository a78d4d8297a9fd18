import type { Kysely } from 'kysely';
import { bool, codec, jsonOrNull } from '../codec.js';
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
  domainVerifiedAt: number | null;
  ssoRequired: boolean;
  createdAt: number;
  updatedAt: number;
}

const stored = codec<OrganizationRecord>()('organizations', {
  id: true,
  tenantId: true,
  name: true,
  slug: true,
  domain: true,
  did: true,
  status: true,
  brandLogoUrl: true,
  brandPrimaryColor: true,
  brandDisplayName: true,
  webauthnAaguidAllowlist: jsonOrNull<string[]>(),
  domainVerifiedAt: true,
  ssoRequired: bool,
  createdAt: true,
  updatedAt: true,
});

/** The fields `update` may change. */
const PATCHABLE = ['name', 'slug', 'domain', 'brandLogoUrl', 'brandPrimaryColor', 'brandDisplayName', 'domainVerifiedAt', 'ssoRequired'] as const;
export type OrganizationPatch = Partial<Pick<OrganizationRecord, (typeof PATCHABLE)[number]>>;

export class OrganizationRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(o: OrganizationRecord): Promise<void> {
    await this.db.insertInto('organizations').values(stored.toRow(o)).execute();
  }

  find(tenantId: string, id: string): Promise<OrganizationRecord | undefined> {
    return this.#find(tenantId, id, false);
  }

  /**
   * Reads the organization and, on PostgreSQL, holds a share lock on it until commit: whatever
   * the caller attaches to it (API keys, members, webhooks) cannot slip past a concurrent delete.
   */
  findShared(tenantId: string, id: string, dialect: Dialect): Promise<OrganizationRecord | undefined> {
    return this.#find(tenantId, id, dialect === 'postgres');
  }

  async #find(tenantId: string, id: string, share: boolean): Promise<OrganizationRecord | undefined> {
    const q = this.db
      .selectFrom('organizations')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }));
    const row = await (share ? q.forShare() : q).executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** The organization whose verified domain this is (at most one per tenant: a unique index). */
  async findByVerifiedDomain(tenantId: string, domain: string): Promise<OrganizationRecord | undefined> {
    const row = await this.db
      .selectFrom('organizations')
      .selectAll()
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('domain', '=', domain), eb('domain_verified_at', 'is not', null)]))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** How many organizations the tenant has (the console overview). */
  async count(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('organizations')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async list(tenantId: string, after: string | undefined, limit: number): Promise<OrganizationRecord[]> {
    let q = this.db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId);
    if (after) q = q.where('id', '>', after);
    return (await q.orderBy('id').limit(limit).execute()).map(stored.toRecord);
  }

  async update(tenantId: string, id: string, patch: OrganizationPatch, now: number): Promise<OrganizationRecord | undefined> {
    const row = await this.db
      .updateTable('organizations')
      .set({ updated_at: now, ...stored.toPatch(patch, PATCHABLE) })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** Sets (or clears, with null) the organization's WebAuthn AAGUID allowlist; undefined when there is no such organization. */
  async setWebauthnAllowlist(tenantId: string, id: string, allowlist: string[] | null, now: number): Promise<OrganizationRecord | undefined> {
    const row = await this.db
      .updateTable('organizations')
      .set({ updated_at: now, ...stored.toPatch({ webauthnAaguidAllowlist: allowlist }, ['webauthnAaguidAllowlist']) })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('organizations')
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
