import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../db.js';
import { codec, json, num } from '../codec.js';
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

const stored = codec<EventRecord>()('events', {
  id: true,
  tenantId: true,
  seq: num,
  type: true,
  organizationId: true,
  actorType: true,
  actorId: true,
  data: json<Record<string, unknown>>(),
  createdAt: true,
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
    // INSERT … SELECT: the row's values, with seq the tenant's highest so far plus one.
    const values = stored.toRow({ ...e, seq: 0 });
    const columns = Object.keys(values) as Array<keyof typeof values>;
    const row = await trx
      .insertInto('events')
      .columns(columns)
      .expression((eb) =>
        eb
          .selectFrom('events')
          .select(columns.map((c) => (c === 'seq' ? sql<number>`coalesce(max(seq), 0) + 1` : sql`${values[c]}`).as(c)))
          .where('tenant_id', '=', e.tenantId),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return stored.toRecord(row);
  }

  /** The sequence number of an event, within the tenant (and the organization, when given). */
  async findSeq(tenantId: string, id: string, organizationId?: string): Promise<number | undefined> {
    let q = this.db.selectFrom('events').select('seq').where('tenant_id', '=', tenantId).where('id', '=', id);
    if (organizationId !== undefined) q = q.where('organization_id', '=', organizationId);
    const row = await q.executeTakeFirst();
    return row ? Number(row.seq) : undefined;
  }

  /**
   * A page of the feed in sequence order: after `afterSeq` ascending, or before `beforeSeq`
   * descending (newest first; no bound: from the newest).
   */
  async list(q: {
    tenantId: string;
    limit: number;
    /** Ascending (the default) or newest first. */
    order?: 'asc' | 'desc';
    afterSeq?: number;
    beforeSeq?: number;
    types?: string[];
    organizationId?: string;
    actorType?: string;
    actorId?: string;
  }): Promise<EventRecord[]> {
    let query = this.db.selectFrom('events').selectAll().where('tenant_id', '=', q.tenantId);
    if (q.afterSeq !== undefined) query = query.where('seq', '>', q.afterSeq);
    if (q.beforeSeq !== undefined) query = query.where('seq', '<', q.beforeSeq);
    if (q.organizationId !== undefined) query = query.where('organization_id', '=', q.organizationId);
    if (q.types?.length) query = query.where('type', 'in', q.types);
    if (q.actorType !== undefined) query = query.where('actor_type', '=', q.actorType);
    if (q.actorId !== undefined) query = query.where('actor_id', '=', q.actorId);
    return (
      await query
        .orderBy('seq', q.order ?? 'asc')
        .limit(q.limit)
        .execute()
    ).map(stored.toRecord);
  }
}
