import type { ColumnType, Kysely } from 'kysely';
import { countInWindow, deleteExpired } from '../atomic.js';
import type { Database } from '../schema.js';

/** `signin_consents.resources` (migration 0008): space-separated resources granted, '' for none. */
export type ConsentResourcesColumn = {
  signin_consents: { resources: ColumnType<string, string | undefined, string> };
};

const words = (v: string | null | undefined) => (v ? v.split(' ').filter(Boolean) : []);

/** Remembered consents (per user and client) and failed-login counters. */
export class SigninConsentRepo {
  readonly #db: Kysely<Database & ConsentResourcesColumn>;
  constructor(db: Kysely<Database>) {
    this.#db = db.withTables<ConsentResourcesColumn>();
  }

  /** The scopes and resources the user has granted the client, if they approved it. */
  async find(tenantId: string, userId: string, clientId: string): Promise<{ scopes: string[]; resources: string[] } | undefined> {
    const r = await this.#db
      .selectFrom('signin_consents')
      .select(['scope', 'resources'])
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId, client_id: clientId }))
      .executeTakeFirst();
    return r && { scopes: words(r.scope), resources: words(r.resources) };
  }

  /**
   * Adds scopes and resources to the user's consent for a client. A consent row exists once the
   * user has approved the client, even with no scope and no resource.
   */
  async grant(tenantId: string, userId: string, clientId: string, scopes: string[], resources: string[], now: number): Promise<void> {
    const existing = await this.find(tenantId, userId, clientId);
    const scope = [...new Set([...(existing?.scopes ?? []), ...scopes])].join(' ');
    const granted = [...new Set([...(existing?.resources ?? []), ...resources])].join(' ');
    await this.#db
      .insertInto('signin_consents')
      .values({ tenant_id: tenantId, user_id: userId, client_id: clientId, scope, resources: granted, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['tenant_id', 'user_id', 'client_id']).doUpdateSet({ scope, resources: granted, updated_at: now }))
      .execute();
  }

  async list(
    tenantId: string,
    userId: string,
  ): Promise<Array<{ clientId: string; clientName: string | null; scopes: string[]; resources: string[]; updatedAt: number }>> {
    const rows = await this.#db
      .selectFrom('signin_consents as c')
      .innerJoin('oauth_clients as k', (j) => j.onRef('k.id', '=', 'c.client_id').onRef('k.tenant_id', '=', 'c.tenant_id'))
      .select(['c.client_id', 'k.client_name', 'c.scope', 'c.resources', 'c.updated_at'])
      .where('c.tenant_id', '=', tenantId)
      .where('c.user_id', '=', userId)
      .orderBy('c.updated_at', 'desc')
      .execute();
    return rows.map((r) => ({
      clientId: r.client_id,
      clientName: r.client_name,
      scopes: words(r.scope),
      resources: words(r.resources),
      updatedAt: r.updated_at,
    }));
  }

  async revoke(tenantId: string, userId: string, clientId: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('signin_consents')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId, client_id: clientId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

/**
 * Fixed-window failure counters shared by every instance. `fail` is one atomic upsert: a window
 * that has ended starts again at 1, so a limit always lifts when its window ends.
 */
export class SigninLoginFailureRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Deletes counters whose window has ended (they no longer limit anything). */
  async sweep(now: number): Promise<void> {
    await deleteExpired(this.db, 'signin_login_failures', 'window_ends_at', now);
  }

  /** Failures counted in the current window of `keyHash`, and when that window ends. */
  async current(tenantId: string, keyHash: string, now: number): Promise<{ count: number; windowEndsAt: number }> {
    const r = await this.db
      .selectFrom('signin_login_failures')
      .select(['count', 'window_ends_at'])
      .where((eb) => eb.and({ tenant_id: tenantId, key_hash: keyHash }))
      .executeTakeFirst();
    if (!r || r.window_ends_at <= now) return { count: 0, windowEndsAt: now };
    return { count: Number(r.count), windowEndsAt: r.window_ends_at };
  }

  /**
   * Reserves one attempt in the current window of `keyHash`, atomically: one upsert that
   * increments the counter only while it is under `max` (or starts a new window at 1 when the old
   * one has ended). False: the limit is reached and nothing was counted. Concurrent callers on
   * any instance can never reserve more than `max` attempts.
   */
  async reserve(tenantId: string, keyHash: string, max: number, now: number, windowMs: number): Promise<boolean> {
    if (max <= 0) return false;
    return countInWindow(this.db, 'signin_login_failures', { tenant_id: tenantId, key_hash: keyHash }, { now, windowMs, max });
  }

  /** Gives back an attempt reserved with `reserve` (it was not a failure, or was not made). */
  async release(tenantId: string, keyHash: string, now: number): Promise<void> {
    await this.db
      .updateTable('signin_login_failures')
      .set((eb) => ({ count: eb('count', '-', 1) }))
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('key_hash', '=', keyHash), eb('count', '>', 0), eb('window_ends_at', '>', now)]))
      .execute();
  }

  async fail(tenantId: string, keyHash: string, now: number, windowMs: number): Promise<void> {
    await countInWindow(this.db, 'signin_login_failures', { tenant_id: tenantId, key_hash: keyHash }, { now, windowMs });
  }

  /** A successful login clears the account's counter (not the IP's). */
  async clear(tenantId: string, keyHash: string): Promise<void> {
    await this.db
      .deleteFrom('signin_login_failures')
      .where((eb) => eb.and({ tenant_id: tenantId, key_hash: keyHash }))
      .execute();
  }
}
