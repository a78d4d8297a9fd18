import type { Kysely } from 'kysely';
import type { AccessTokenAlg } from '../../oauth/tokens/jws.js';
import type { ResourceServerRecord, ResourceServerStore } from '../../oauth/types.js';
import { bool, cast, codec, field, words } from '../codec.js';
import type { Database } from '../schema.js';

const stored = codec<ResourceServerRecord>()('oauth_resource_servers', {
  id: true,
  tenantId: true,
  name: true,
  identifier: true,
  signingAlg: cast<AccessTokenAlg>(),
  accessTokenTtlSeconds: true,
  scopes: words.in('scope'),
  dpopRequired: bool,
  permissionDescriptions: field<Record<string, string>, string | null>(
    (v) => (v ? (JSON.parse(v) as Record<string, string>) : {}),
    (v) => (Object.keys(v).length === 0 ? null : JSON.stringify(v)),
  ),
  createdAt: true,
  updatedAt: true,
});

/** Resource servers (tenant-wide): every query filters on tenant_id. */
export class OAuthResourceServerRepo implements ResourceServerStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rs: ResourceServerRecord): Promise<void> {
    await this.db.insertInto('oauth_resource_servers').values(stored.toRow(rs)).execute();
  }

  async find(tenantId: string, id: string): Promise<ResourceServerRecord | undefined> {
    const row = await this.db
      .selectFrom('oauth_resource_servers')
      .selectAll()
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async findByIdentifier(tenantId: string, identifier: string): Promise<ResourceServerRecord | undefined> {
    const row = await this.db
      .selectFrom('oauth_resource_servers')
      .selectAll()
      .where((eb) => eb.and({ identifier, tenant_id: tenantId }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** A page ordered by id (ids sort by creation time), after `cursor`. */
  async list(tenantId: string, opts: { after?: string | undefined; limit: number }): Promise<ResourceServerRecord[]> {
    let q = this.db.selectFrom('oauth_resource_servers').selectAll().where('tenant_id', '=', tenantId);
    if (opts.after) q = q.where('id', '>', opts.after);
    return (await q.orderBy('id').limit(opts.limit).execute()).map(stored.toRecord);
  }

  async update(rs: ResourceServerRecord): Promise<boolean> {
    const { id: _id, tenant_id: _t, created_at: _c, ...fields } = stored.toRow(rs);
    const r = await this.db
      .updateTable('oauth_resource_servers')
      .set(fields)
      .where((eb) => eb.and({ id: rs.id, tenant_id: rs.tenantId }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('oauth_resource_servers')
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
