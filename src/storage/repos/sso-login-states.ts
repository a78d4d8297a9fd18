import type { Kysely } from 'kysely';
import { consumeOnce, deleteExpired, Sweeper } from '../atomic.js';
import { codec } from '../codec.js';
import type { Database } from '../schema.js';

export interface SsoLoginStateRecord {
  stateHash: string;
  tenantId: string;
  connectionId: string;
  browserHash: string;
  secretsEnc: string;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

const stored = codec<SsoLoginStateRecord>()('sso_login_states', {
  stateHash: true,
  tenantId: true,
  connectionId: true,
  browserHash: true,
  secretsEnc: true,
  createdAt: true,
  expiresAt: true,
  consumedAt: true,
});

/** States expired for an hour are swept every 200 round trips started (of any instance). */
const sweeper = new Sweeper(200, (db, now) => deleteExpired(db, 'sso_login_states', 'expires_at', now - 3600_000));

export class SsoLoginStateRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(s: SsoLoginStateRecord): Promise<void> {
    await sweeper.tick(this.db, s.createdAt);
    await this.db.insertInto('sso_login_states').values(stored.toRow(s)).execute();
  }

  async find(tenantId: string, stateHash: string): Promise<SsoLoginStateRecord | undefined> {
    const row = await this.db.selectFrom('sso_login_states').selectAll().where((eb) => eb.and({ tenant_id: tenantId, state_hash: stateHash })).executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** Consume-once, only by the browser that started the round trip and before it expires. */
  consume(tenantId: string, stateHash: string, browserHash: string, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'sso_login_states', {
      key: { tenant_id: tenantId, state_hash: stateHash, browser_hash: browserHash },
      column: 'consumed_at',
      expiresColumn: 'expires_at',
      now,
    });
  }
}
