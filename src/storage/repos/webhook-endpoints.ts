import type { Kysely } from 'kysely';
import { codec, json } from '../codec.js';
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
  updatedAt: number;
}

const stored = codec<WebhookEndpointRecord>()('webhook_endpoints', {
  id: true,
  tenantId: true,
  organizationId: true,
  url: true,
  events: json<string[]>(),
  secretEnc: true,
  createdAt: true,
  updatedAt: true,
});

export class WebhookEndpointRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(e: WebhookEndpointRecord): Promise<void> {
    await this.db.insertInto('webhook_endpoints').values(stored.toRow(e)).execute();
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async findById(id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = await this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /**
   * How many endpoints the tenant has, and how many of them are failing: their latest delivery
   * (by id, i.e. the newest event sent to them) is `failed`, every attempt spent (the console overview).
   */
  async countWithFailing(tenantId: string): Promise<{ total: number; failing: number }> {
    const row = await this.db
      .selectFrom('webhook_endpoints as e')
      .select((eb) => {
        const latestStatus = eb
          .selectFrom('webhook_deliveries as d')
          .select('d.status')
          .whereRef('d.endpoint_id', '=', 'e.id')
          .orderBy('d.id', 'desc')
          .limit(1);
        return [
          eb.fn.countAll<number | string>().as('total'),
          eb.fn.sum<number | string | null>(eb.case().when(latestStatus, '=', 'failed').then(1).else(0).end()).as('failing'),
        ];
      })
      .where('e.tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return { total: Number(row.total), failing: Number(row.failing ?? 0) };
  }

  /**
   * The organization's endpoints. With `lock` (PostgreSQL only) they are share-locked until
   * commit, so deliveries written for them cannot race an endpoint's deletion.
   */
  async listByOrganization(tenantId: string, organizationId: string, lock?: Dialect): Promise<WebhookEndpointRecord[]> {
    const q = this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }))
      .orderBy('id');
    return (await (lock === 'postgres' ? q.forShare() : q).execute()).map(stored.toRecord);
  }

  /** Changes url and events; false when the endpoint does not exist in this organization. */
  async update(e: Pick<WebhookEndpointRecord, 'tenantId' | 'organizationId' | 'id' | 'url' | 'events' | 'updatedAt'>): Promise<boolean> {
    const r = await this.db
      .updateTable('webhook_endpoints')
      .set({ url: e.url, events: JSON.stringify(e.events), updated_at: e.updatedAt })
      .where((eb) => eb.and({ tenant_id: e.tenantId, organization_id: e.organizationId, id: e.id }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async delete(tenantId: string, organizationId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('webhook_endpoints')
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
