import type { Kysely } from 'kysely';
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
    const ends = now + windowMs;
    const row = await this.db
      .insertInto('rate_limits')
      .values({ tenant_id: tenantId, bucket, count: 1, window_ends_at: ends })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'bucket'])
          .doUpdateSet((eb) => ({
            count: eb.case().when('rate_limits.window_ends_at', '<=', now).then(1).else(eb('rate_limits.count', '+', 1)).end(),
            window_ends_at: eb.case().when('rate_limits.window_ends_at', '<=', now).then(ends).else(eb.ref('rate_limits.window_ends_at')).end(),
          }))
          .where((eb) => eb.or([eb('rate_limits.window_ends_at', '<=', now), eb('rate_limits.count', '<', max)])),
      )
      .returning('count')
      .executeTakeFirst();
    if (row) return 0;
    const current = await this.db
      .selectFrom('rate_limits')
      .select('window_ends_at')
      .where('tenant_id', '=', tenantId)
      .where('bucket', '=', bucket)
      .executeTakeFirst();
    return Math.max(1, (current?.window_ends_at ?? now) - now);
  }
}
