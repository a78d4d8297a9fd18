import type { Kysely } from 'kysely';
import { countInWindow } from '../atomic.js';
import type { Database } from '../schema.js';

/**
 * Fixed-window counters in the database, so every instance counts against one limit. A hit is
 * one statement (insert, or reset an ended window, or add one while under the limit), so
 * parallel requests cannot all slip under it.
 */
export class RateLimitRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Counts one request; returns how long to wait (ms) if the limit is reached, else 0. */
  async hit(tenantId: string, bucket: string, max: number, windowMs: number, now: number): Promise<number> {
    if (await countInWindow(this.db, 'rate_limits', { tenant_id: tenantId, bucket }, { now, windowMs, max })) return 0;
    const current = await this.db
      .selectFrom('rate_limits')
      .select('window_ends_at')
      .where((eb) => eb.and({ tenant_id: tenantId, bucket }))
      .executeTakeFirst();
    return Math.max(1, (current?.window_ends_at ?? now) - now);
  }
}
