import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';

export interface EventRecord {
  id: string;
  tenantId: string;
  seq: number;
  type: string;
  organizationId: string | null;
  actorType: string;
  actorId: string | null;
  data: Record<string, unknown>;
  createdAt: number;
}

type Row = Database['events'];
const toRecord = (r: Row): EventRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  seq: Number(r.seq),
  type: r.type,
  organizationId: r.organization_id,
  actorType: r.actor_type,
  actorId: r.actor_id,
  data: JSON.parse(r.data) as Record<string, unknown>,
  createdAt: r.created_at,
});

export class EventRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Appends an event inside the caller's transaction. `seq` is the tenant's next number, taken
   * under a per-tenant lock held until commit (PostgreSQL advisory lock; SQLite has one writer),
   * so sequence order is commit order and a reader's cursor can never pass an event that
   * commits later.
   */
  async append(trx: Kysely<Database>, e: Omit<EventRecord, 'seq'>): Promise<EventRecord> {
    // Outside a transaction the lock would be released at once and two appends could race.
    if (!trx.isTransaction) throw new Error('events must be appended inside a transaction');
    if (this.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext(${`keyhall.events:${e.tenantId}`}))`.execute(trx);
    }
    const row = await trx
      .insertInto('events')
      .columns(['id', 'tenant_id', 'seq', 'type', 'organization_id', 'actor_type', 'actor_id', 'data', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('events')
          .select([
            sql<string>`${e.id}`.as('id'),
            sql<string>`${e.tenantId}`.as('tenant_id'),
            sql<number>`coalesce(max(seq), 0) + 1`.as('seq'),
            sql<string>`${e.type}`.as('type'),
            sql<string | null>`${e.organizationId}`.as('organization_id'),
            sql<string>`${e.actorType}`.as('actor_type'),
            sql<string | null>`${e.actorId}`.as('actor_id'),
            sql<string>`${JSON.stringify(e.data)}`.as('data'),
            sql<number>`${e.createdAt}`.as('created_at'),
          ])
          .where('tenant_id', '=', e.tenantId),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  /** The sequence number of an event, within the tenant (and the organization, when given). */
  async findSeq(tenantId: string, id: string, organizationId?: string): Promise<number | undefined> {
    let q = this.db.selectFrom('events').select('seq').where('tenant_id', '=', tenantId).where('id', '=', id);
    if (organizationId !== undefined) q = q.where('organization_id', '=', organizationId);
    const row = await q.executeTakeFirst();
    return row ? Number(row.seq) : undefined;
  }

  async list(q: {
    tenantId: string;
    afterSeq: number;
    limit: number;
    types?: string[];
    organizationId?: string;
  }): Promise<EventRecord[]> {
    let query = this.db
      .selectFrom('events')
      .selectAll()
      .where('tenant_id', '=', q.tenantId)
      .where('seq', '>', q.afterSeq);
    if (q.organizationId !== undefined) query = query.where('organization_id', '=', q.organizationId);
    if (q.types?.length) query = query.where('type', 'in', q.types);
    const rows = await query.orderBy('seq').limit(q.limit).execute();
    return rows.map(toRecord);
  }
}
