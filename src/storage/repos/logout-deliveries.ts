import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import { claimWithLease, compareAndSet } from '../atomic.js';
import { codec, type OutboxState, outboxState, type OutboxStatus } from '../codec.js';
import type { Database } from '../schema.js';

export type LogoutDeliveryStatus = OutboxStatus;

/** One logout token owed to one client for one ended session (the back-channel logout outbox). */
export interface LogoutDeliveryRecord extends OutboxState {
  id: string;
  tenantId: string;
  clientId: string;
  userId: string;
  sessionId: string;
  uri: string;
}

const stored = codec<LogoutDeliveryRecord>()('logout_deliveries', {
  id: true,
  tenantId: true,
  clientId: true,
  userId: true,
  sessionId: true,
  uri: true,
  ...outboxState,
});

/** A client that received tokens in a session, with where it wants to hear of the session's end. */
export interface SessionClient {
  clientId: string;
  backchannelLogoutUri: string | null;
}

/**
 * The back-channel logout outbox (claim-with-lease and compare-and-set, docs/storage.md) and the
 * session's clients and refresh-token families it is computed from.
 */
export class LogoutDeliveryRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** The clients that redeemed a code issued in the session, with their back-channel logout URI (or null). */
  async sessionClients(tenantId: string, sessionId: string): Promise<SessionClient[]> {
    const rows = await this.db
      .selectFrom('signin_session_clients as c')
      .leftJoin('signin_client_settings as s', (j) => j.onRef('s.client_id', '=', 'c.client_id').onRef('s.tenant_id', '=', 'c.tenant_id'))
      .select(['c.client_id', 's.backchannel_logout_uri'])
      .where('c.tenant_id', '=', tenantId)
      .where('c.session_id', '=', sessionId)
      .orderBy('c.client_id')
      .execute();
    return rows.map((r) => ({ clientId: r.client_id, backchannelLogoutUri: r.backchannel_logout_uri ?? null }));
  }

  /**
   * Revokes the live refresh-token families started in the session, except those granted
   * `offline_access` (access while the user is not signed in, OIDC Core §11). Returns how many.
   */
  async revokeSessionFamilies(tenantId: string, sessionId: string, now: number): Promise<number> {
    const families = await this.db
      .selectFrom('oauth_refresh_families')
      .select(['id', 'scope'])
      .where('tenant_id', '=', tenantId)
      .where('session_id', '=', sessionId)
      .where('revoked_at', 'is', null)
      .execute();
    const bound = families.filter((f) => !f.scope.split(' ').includes('offline_access')).map((f) => f.id);
    if (bound.length === 0) return 0;
    const r = await this.db
      .updateTable('oauth_refresh_families')
      .set({ revoked_at: now })
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', bound)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async insert(d: LogoutDeliveryRecord): Promise<void> {
    await this.db
      .insertInto('logout_deliveries')
      .values(stored.toRow({ ...d, leaseOwner: null, leaseUntil: null, lastStatusCode: null, lastError: null }))
      .execute();
  }

  async find(id: string): Promise<LogoutDeliveryRecord | undefined> {
    const r = await this.db.selectFrom('logout_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return r && stored.toRecord(r);
  }

  /** A client's deliveries, oldest first (tests and operators). */
  async listByClient(tenantId: string, clientId: string): Promise<LogoutDeliveryRecord[]> {
    const rows = await this.db
      .selectFrom('logout_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('client_id', '=', clientId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(stored.toRecord);
  }

  /**
   * Claims due deliveries: pending ones whose time has come, and ones whose lease ran out (their
   * instance died mid-attempt). On PostgreSQL SKIP LOCKED keeps two instances off one row.
   */
  async claim(q: { owner: string; now: number; leaseMs: number; limit: number }): Promise<LogoutDeliveryRecord[]> {
    const { now } = q;
    const due = (eb: ExpressionBuilder<Database, 'logout_deliveries'>) =>
      eb.or([
        eb.and([eb('status', '=', 'pending'), eb('next_attempt_at', '<=', now)]),
        eb.and([eb('status', '=', 'delivering'), eb('lease_until', '<=', now)]),
      ]);
    const candidates = this.db.selectFrom('logout_deliveries').select('id').where(due).orderBy('next_attempt_at').orderBy('id').limit(q.limit);
    const rows = await claimWithLease(this.db, this.dialect, 'logout_deliveries', {
      candidates,
      due,
      owner: q.owner,
      leaseUntil: now + q.leaseMs,
      set: { status: 'delivering', updated_at: now },
    });
    return rows.map(stored.toRecord);
  }

  /** Deletes delivered and failed rows last changed at or before `before`. */
  async sweep(before: number): Promise<void> {
    await this.db.deleteFrom('logout_deliveries').where('status', 'in', ['delivered', 'failed']).where('updated_at', '<=', before).execute();
  }

  /** Records an attempt's outcome, only while `owner` still holds the lease. False: the lease was lost. */
  async complete(
    d: LogoutDeliveryRecord,
    owner: string,
    next: { status: LogoutDeliveryStatus; nextAttemptAt: number; statusCode: number | null; error: string | null },
    now: number,
  ): Promise<boolean> {
    return compareAndSet(this.db, 'logout_deliveries', {
      key: { id: d.id },
      seen: { lease_owner: owner, status: 'delivering' },
      set: {
        status: next.status,
        attempts: d.attempts + 1,
        next_attempt_at: next.nextAttemptAt,
        last_status_code: next.statusCode,
        last_error: next.error,
        lease_owner: null,
        lease_until: null,
        updated_at: now,
      },
    });
  }
}
