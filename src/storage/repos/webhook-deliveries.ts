import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../db.js';
import { claimWithLease, compareAndSet } from '../atomic.js';
import { codec, num, type OutboxState, outboxState, type OutboxStatus } from '../codec.js';
import type { Database } from '../schema.js';

export type DeliveryStatus = OutboxStatus;

export interface DeliveryRecord extends OutboxState {
  id: string;
  tenantId: string;
  organizationId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  body: string;
}

export interface AttemptRecord {
  id: string;
  deliveryId: string;
  attempt: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

const stored = codec<DeliveryRecord>()('webhook_deliveries', {
  id: true,
  tenantId: true,
  organizationId: true,
  endpointId: true,
  eventId: true,
  eventType: true,
  body: true,
  ...outboxState,
});
const attemptRows = codec<AttemptRecord>()('webhook_attempts', {
  id: true,
  deliveryId: true,
  attempt: num,
  startedAt: true,
  durationMs: num,
  statusCode: true,
  error: true,
});

export class WebhookDeliveryRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(d: DeliveryRecord): Promise<void> {
    // A new delivery is not leased and has no result yet.
    const fresh = { ...d, leaseOwner: null, leaseUntil: null, lastStatusCode: null, lastError: null };
    await this.db.insertInto('webhook_deliveries').values(stored.toRow(fresh)).execute();
  }

  /**
   * Claims due deliveries for one dispatcher: pending ones whose time has come, and ones whose
   * lease expired (their dispatcher died mid-attempt). Fair: at most `perEndpoint` rows of one
   * endpoint and `perOrganization` of one organization per claim, oldest first, so one busy
   * organization cannot fill a pass. On PostgreSQL the chosen rows are locked with SKIP LOCKED,
   * so concurrent dispatchers never claim the same row.
   */
  async claim(q: {
    owner: string;
    now: number;
    leaseMs: number;
    limit: number;
    perEndpoint: number;
    perOrganization: number;
    skipEndpoints: string[];
    skipOrganizations: string[];
  }): Promise<DeliveryRecord[]> {
    const { now } = q;
    const due = (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
      eb.or([
        eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now)]),
        eb.and([eb('status', '=', 'delivering'), eb('lease_until', '<=', now)]),
      ]);
    let dueRows = this.db
      .selectFrom('webhook_deliveries')
      .select([
        'id',
        'next_attempt_at',
        sql<number>`row_number() over (partition by endpoint_id order by next_attempt_at, id)`.as('endpoint_rank'),
        sql<number>`row_number() over (partition by organization_id order by next_attempt_at, id)`.as('organization_rank'),
      ])
      .where(due);
    if (q.skipEndpoints.length) dueRows = dueRows.where('endpoint_id', 'not in', q.skipEndpoints);
    if (q.skipOrganizations.length) dueRows = dueRows.where('organization_id', 'not in', q.skipOrganizations);
    const chosen = this.db
      .selectFrom(dueRows.as('ranked'))
      .select('ranked.id')
      .where('ranked.endpoint_rank', '<=', q.perEndpoint)
      .where('ranked.organization_rank', '<=', q.perOrganization)
      .orderBy('ranked.next_attempt_at')
      .limit(q.limit);
    const rows = await claimWithLease(this.db, this.dialect, 'webhook_deliveries', {
      candidates: chosen,
      due,
      owner: q.owner,
      leaseUntil: now + q.leaseMs,
      set: { status: 'delivering', updated_at: now },
    });
    return rows.map(stored.toRecord);
  }

  /** Gives a claimed delivery back untouched (the dispatcher took more than it may run). */
  async release(id: string, owner: string, now: number): Promise<void> {
    await compareAndSet(this.db, 'webhook_deliveries', {
      key: { id },
      seen: { lease_owner: owner },
      set: { status: 'pending', lease_owner: null, lease_until: null, updated_at: now },
    });
  }

  /**
   * Records an attempt and the delivery's next state, only if this dispatcher still holds the
   * lease (compare-and-set on lease_owner). Returns false if the lease was lost.
   */
  async complete(
    d: DeliveryRecord,
    owner: string,
    attempt: AttemptRecord,
    next: { status: DeliveryStatus; nextAttemptAt: number; statusCode: number | null; error: string | null },
    now: number,
  ): Promise<boolean> {
    const run = async (trx: Kysely<Database>): Promise<boolean> => {
      const moved = await compareAndSet(trx, 'webhook_deliveries', {
        key: { id: d.id },
        seen: { lease_owner: owner, status: 'delivering' },
        set: {
          status: next.status,
          attempts: sql<number>`attempts + 1`,
          next_attempt_at: next.nextAttemptAt,
          lease_owner: null,
          lease_until: null,
          last_status_code: next.statusCode,
          last_error: next.error,
          updated_at: now,
        },
      });
      if (!moved) return false;
      await trx.insertInto('webhook_attempts').values(attemptRows.toRow(attempt)).execute();
      return true;
    };
    // Inside a caller's transaction (the dispatcher records a final failure's event with it).
    return this.db.isTransaction ? run(this.db) : this.db.transaction().execute(run);
  }

  async find(tenantId: string, endpointId: string, id: string): Promise<DeliveryRecord | undefined> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, endpoint_id: endpointId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async list(q: { tenantId: string; endpointId: string; status?: DeliveryStatus; after?: string; limit: number }): Promise<DeliveryRecord[]> {
    let query = this.db.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', q.tenantId).where('endpoint_id', '=', q.endpointId);
    if (q.status) query = query.where('status', '=', q.status);
    if (q.after) query = query.where('id', '>', q.after);
    return (await query.orderBy('id').limit(q.limit).execute()).map(stored.toRecord);
  }

  async attemptsOf(deliveryIds: string[]): Promise<AttemptRecord[]> {
    if (deliveryIds.length === 0) return [];
    const rows = await this.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('attempt').execute();
    return rows.map(attemptRows.toRecord);
  }

  /**
   * Retry now: a pending delivery becomes due now; a failed or delivered one gets one more
   * attempt, now (a resend: the receiver asked for it again). Same id, same body. One
   * compare-and-set statement on the status, so a delivery claimed meanwhile (delivering) is left
   * alone and is never attempted twice at once.
   */
  async scheduleRetry(tenantId: string, endpointId: string, id: string, now: number): Promise<DeliveryRecord | undefined> {
    const row = await this.db
      .updateTable('webhook_deliveries')
      .set({
        status: 'pending',
        attempt_limit: sql<number>`case when status = 'pending' then attempt_limit else attempts + 1 end`,
        next_attempt_at: now,
        updated_at: now,
      })
      .where((eb) =>
        eb.and([eb('tenant_id', '=', tenantId), eb('endpoint_id', '=', endpointId), eb('id', '=', id), eb('status', 'in', ['pending', 'failed', 'delivered'])]),
      )
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /**
   * The undelivered backlog across all tenants (for metrics): deliveries not yet delivered or
   * given up, and the earliest time one of them fell due (null when none is due by `now`).
   */
  async backlog(now: number): Promise<{ size: number; oldestDueAt: number | null }> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('size'),
        eb.fn.min<number | null>(sql<number>`case when next_attempt_at <= ${now} then next_attempt_at end`).as('oldest'),
      ])
      .where('status', 'in', ['pending', 'delivering'])
      .executeTakeFirst();
    return { size: Number(row?.size ?? 0), oldestDueAt: row?.oldest == null ? null : Number(row.oldest) };
  }
}
