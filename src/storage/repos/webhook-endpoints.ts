import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';

export interface WebhookEndpointRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  url: string;
  events: string[];
  secretEnc: string;
  createdAt: number;
}

type Row = Database['webhook_endpoints'];
const toRecord = (r: Row): WebhookEndpointRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  organizationId: r.organization_id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  secretEnc: r.secret_enc,
  createdAt: r.created_at,
});

export class WebhookEndpointRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(e: WebhookEndpointRecord): Promise<void> {
    await this.db
      .insertInto('webhook_endpoints')
      .values({
        id: e.id,
        tenant_id: e.tenantId,
        organization_id: e.organizationId,
        url: e.url,
        events: JSON.stringify(e.events),
        secret_enc: e.secretEnc,
        created_at: e.createdAt,
      })
      .execute();
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async findById(id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = await this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * The organization's endpoints. With `lock` (PostgreSQL only) they are share-locked until
   * commit, so deliveries written for them cannot race an endpoint's deletion.
   */
  async listByOrganization(tenantId: string, organizationId: string, lock?: Dialect): Promise<WebhookEndpointRecord[]> {
    let q = this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .orderBy('id');
    if (lock === 'postgres') q = q.forShare();
    return (await q.execute()).map(toRecord);
  }

  async delete(tenantId: string, organizationId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('webhook_endpoints')
      .where('tenant_id', '=', tenantId)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
