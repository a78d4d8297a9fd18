import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';

export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'failed';

export interface DeliveryRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  attemptLimit: number;
  nextAttemptAt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
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

type Row = Database['webhook_deliveries'];
const toRecord = (r: Row): DeliveryRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  organizationId: r.organization_id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  body: r.body,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  attemptLimit: Number(r.attempt_limit),
  nextAttemptAt: r.next_attempt_at,
  leaseOwner: r.lease_owner,
  leaseUntil: r.lease_until,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class WebhookDeliveryRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(d: DeliveryRecord): Promise<void> {
    await this.db
      .insertInto('webhook_deliveries')
      .values({
        id: d.id,
        tenant_id: d.tenantId,
        organization_id: d.organizationId,
        endpoint_id: d.endpointId,
        event_id: d.eventId,
        event_type: d.eventType,
        body: d.body,
        status: d.status,
        attempts: d.attempts,
        attempt_limit: d.attemptLimit,
        next_attempt_at: d.nextAttemptAt,
        lease_owner: null,
        lease_until: null,
        last_status_code: null,
        last_error: null,
        created_at: d.createdAt,
        updated_at: d.updatedAt,
      })
      .execute();
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
    const claimable =
      this.dialect === 'postgres'
        ? this.db.selectFrom('webhook_deliveries').select('id').where('id', 'in', chosen).forUpdate().skipLocked()
        : chosen;
    const rows = await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'delivering', lease_owner: q.owner, lease_until: now + q.leaseMs, updated_at: now })
      .where('id', 'in', claimable)
      .where(due)
      .returningAll()
      .execute();
    return rows.map(toRecord);
  }

  /** Gives a claimed delivery back untouched (the dispatcher took more than it may run). */
  async release(id: string, owner: string, now: number): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', lease_owner: null, lease_until: null, updated_at: now })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .execute();
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
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('webhook_deliveries')
        .set({
          status: next.status,
          attempts: sql<number>`attempts + 1`,
          next_attempt_at: next.nextAttemptAt,
          lease_owner: null,
          lease_until: null,
          last_status_code: next.statusCode,
          last_error: next.error,
          updated_at: now,
        })
        .where('id', '=', d.id)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'delivering')
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await trx
        .insertInto('webhook_attempts')
        .values({
          id: attempt.id,
          delivery_id: attempt.deliveryId,
          attempt: attempt.attempt,
          started_at: attempt.startedAt,
          duration_ms: attempt.durationMs,
          status_code: attempt.statusCode,
          error: attempt.error,
        })
        .execute();
      return true;
    });
  }

  async find(tenantId: string, endpointId: string, id: string): Promise<DeliveryRecord | undefined> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('endpoint_id', '=', endpointId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async list(q: { tenantId: string; endpointId: string; status?: DeliveryStatus; after?: string; limit: number }): Promise<DeliveryRecord[]> {
    let query = this.db.selectFrom('webhook_deliveries').selectAll().where('tenant_id', '=', q.tenantId).where('endpoint_id', '=', q.endpointId);
    if (q.status) query = query.where('status', '=', q.status);
    if (q.after) query = query.where('id', '>', q.after);
    const rows = await query.orderBy('id').limit(q.limit).execute();
    return rows.map(toRecord);
  }

  async attemptsOf(deliveryIds: string[]): Promise<AttemptRecord[]> {
    if (deliveryIds.length === 0) return [];
    const rows = await this.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('attempt').execute();
    return rows.map((r) => ({
      id: r.id,
      deliveryId: r.delivery_id,
      attempt: Number(r.attempt),
      startedAt: r.started_at,
      durationMs: Number(r.duration_ms),
      statusCode: r.status_code,
      error: r.error,
    }));
  }

  /** Replay: one more attempt, now, for a delivery that is not in flight. Same id, same body. */
  async scheduleRetry(tenantId: string, endpointId: string, id: string, now: number): Promise<DeliveryRecord | undefined> {
    const row = await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', attempt_limit: sql<number>`attempts + 1`, next_attempt_at: now, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('endpoint_id', '=', endpointId)
      .where('id', '=', id)
      .where('status', 'in', ['failed', 'delivered'])
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }
}
