import type { Kysely } from 'kysely';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import type { ReplayCache, RevokedTokenStore } from '../../oauth/types.js';
import { deleteExpired, insertOnce, Sweeper } from '../atomic.js';
import type { Database } from '../schema.js';

/** How often (in uses) expired rows are swept, so the tables stay small without a scheduler. */
const SWEEP_EVERY = 500;
const replaySweeper = new Sweeper(SWEEP_EVERY, (db, now) => deleteExpired(db, 'oauth_replay', 'expires_at', now));
const revokedSweeper = new Sweeper(SWEEP_EVERY, (db, now) => deleteExpired(db, 'oauth_revoked_tokens', 'expires_at', now));

/**
 * The `jti` replay cache shared by every instance: an INSERT into a table keyed by
 * (tenant, hash of the value); the insert that lands wins (consume-once, docs/storage.md).
 */
export class OAuthReplayRepo implements ReplayCache {
  constructor(private readonly db: Kysely<Database>) {}

  async use(tenantId: string, key: string, expiresAt: number, now: number): Promise<boolean> {
    await replaySweeper.tick(this.db, now);
    // One statement: insert, or take over an entry that has expired (it no longer blocks its key).
    const row = { tenant_id: tenantId, key_hash: sha256Hex(key), expires_at: expiresAt };
    return insertOnce(this.db, 'oauth_replay', row, { unique: ['tenant_id', 'key_hash'], expiresColumn: 'expires_at', now });
  }
}

/** Access tokens revoked before expiry (RFC 7009), by `jti`, until they would have expired. */
export class OAuthRevokedTokenRepo implements RevokedTokenStore {
  constructor(private readonly db: Kysely<Database>) {}

  async revoke(tenantId: string, jti: string, expiresAt: number, now: number): Promise<void> {
    await revokedSweeper.tick(this.db, now);
    await insertOnce(this.db, 'oauth_revoked_tokens', { tenant_id: tenantId, jti, expires_at: expiresAt }, { unique: ['tenant_id', 'jti'] });
  }

  async isRevoked(tenantId: string, jti: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('oauth_revoked_tokens')
      .select('jti')
      .where((eb) => eb.and({ tenant_id: tenantId, jti }))
      .executeTakeFirst();
    return row !== undefined;
  }
}
