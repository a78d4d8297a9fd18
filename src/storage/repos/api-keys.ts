import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  organizationId: string | null;
  name: string;
  scopes: string[];
  keyHash: string;
  keyPrefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

type Row = Database['api_keys'];
const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  organizationId: r.organization_id,
  name: r.name,
  scopes: JSON.parse(r.scopes) as string[],
  keyHash: r.key_hash,
  keyPrefix: r.key_prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export class ApiKeyRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(k: ApiKeyRecord, trx: Kysely<Database> = this.db): Promise<void> {
    await trx
      .insertInto('api_keys')
      .values({
        id: k.id,
        tenant_id: k.tenantId,
        organization_id: k.organizationId,
        name: k.name,
        scopes: JSON.stringify(k.scopes),
        key_hash: k.keyHash,
        key_prefix: k.keyPrefix,
        created_at: k.createdAt,
        last_used_at: k.lastUsedAt,
        revoked_at: k.revokedAt,
      })
      .execute();
  }

  /** Looks a key up by the hash of the presented secret, within one tenant. */
  async findByHash(tenantId: string, keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', keyHash)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row && toRecord(row);
  }
}
