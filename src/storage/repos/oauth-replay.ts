import type { Kysely } from 'kysely';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import type { ReplayCache, RevokedTokenStore } from '../../oauth/types.js';
import type { Database } from '../schema.js';

/** How often (in uses) expired rows are swept, so the tables stay small without a scheduler. */
const SWEEP_EVERY = 500;

/**
 * The `jti` replay cache shared by every instance: an INSERT into a table keyed by
 * (tenant, hash of the value); the insert that lands wins (consume-once, docs/storage.md).
 */
export class OAuthReplayRepo implements ReplayCache {
  #uses = 0;
  constructor(private readonly db: Kysely<Database>) {}

  async use(tenantId: string, key: string, expiresAt: number, now: number): Promise<boolean> {
    if (++this.#uses % SWEEP_EVERY === 0) await this.db.deleteFrom('oauth_replay').where('expires_at', '<=', now).execute();
    // One statement: insert, or take over an entry that has expired (it no longer blocks its key).
    const r = await this.db
      .insertInto('oauth_replay')
      .values({ tenant_id: tenantId, key_hash: sha256Hex(key), expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'key_hash'])
          .doUpdateSet({ expires_at: (eb) => eb.ref('excluded.expires_at') })
          .where('oauth_replay.expires_at', '<=', now),
      )
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}

/** Access tokens revoked before expiry (RFC 7009), by `jti`, until they would have expired. */
export class OAuthRevokedTokenRepo implements RevokedTokenStore {
  #uses = 0;
  constructor(private readonly db: Kysely<Database>) {}

  async revoke(tenantId: string, jti: string, expiresAt: number, now: number): Promise<void> {
    if (++this.#uses % SWEEP_EVERY === 0) await this.db.deleteFrom('oauth_revoked_tokens').where('expires_at', '<=', now).execute();
    await this.db
      .insertInto('oauth_revoked_tokens')
      .values({ tenant_id: tenantId, jti, expires_at: expiresAt })
      .onConflict((oc) => oc.columns(['tenant_id', 'jti']).doNothing())
      .execute();
  }

  async isRevoked(tenantId: string, jti: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('oauth_revoked_tokens')
      .select('jti')
      .where('tenant_id', '=', tenantId)
      .where('jti', '=', jti)
      .executeTakeFirst();
    return row !== undefined;
  }
}
