import type { Kysely } from 'kysely';
import { consumeOnce, deleteExpired, Sweeper } from '../atomic.js';
import { codec } from '../codec.js';
import type { Dialect } from '../db.js';
import type { Database } from '../schema.js';

export interface TenantAdminRecord {
  tenantId: string;
  userId: string;
  createdAt: number;
}

export interface ConsoleSetupTokenRecord {
  tokenHash: string;
  tenantId: string;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

const admins = codec<TenantAdminRecord>()('tenant_admins', { tenantId: true, userId: true, createdAt: true });
const setupTokens = codec<ConsoleSetupTokenRecord>()('console_setup_tokens', {
  tokenHash: true,
  tenantId: true,
  createdAt: true,
  expiresAt: true,
  consumedAt: true,
});

/** Links expired for a day are swept every 50 links made. */
const sweeper = new Sweeper(50, (db, now) => deleteExpired(db, 'console_setup_tokens', 'expires_at', now - 24 * 3600_000));

export class TenantAdminRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** False when the user already is an administrator. */
  async insert(a: TenantAdminRecord): Promise<boolean> {
    const r = await this.db
      .insertInto('tenant_admins')
      .values(admins.toRow(a))
      .onConflict((oc) => oc.columns(['tenant_id', 'user_id']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async remove(tenantId: string, userId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('tenant_admins')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async isAdmin(tenantId: string, userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('tenant_admins')
      .select('user_id')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The tenant's administrators with their emails, oldest first. */
  async list(tenantId: string): Promise<Array<TenantAdminRecord & { email: string }>> {
    const rows = await this.db
      .selectFrom('tenant_admins')
      .innerJoin('users', 'users.id', 'tenant_admins.user_id')
      .select(['tenant_admins.tenant_id', 'tenant_admins.user_id', 'tenant_admins.created_at', 'users.email'])
      .where('tenant_admins.tenant_id', '=', tenantId)
      .orderBy('tenant_admins.created_at')
      .orderBy('tenant_admins.user_id')
      .execute();
    return rows.map((r) => ({ ...admins.toRecord(r), email: r.email }));
  }

  /**
   * The administrators' user ids. With `lock` (PostgreSQL only) their rows stay write-locked
   * until commit, so two removals cannot both see another administrator left and leave none
   * (SQLite runs one writing transaction at a time).
   */
  async userIds(tenantId: string, lock?: Dialect): Promise<string[]> {
    const q = this.db.selectFrom('tenant_admins').select('user_id').where('tenant_id', '=', tenantId).orderBy('user_id');
    return (await (lock === 'postgres' ? q.forUpdate() : q).execute()).map((r) => r.user_id);
  }

  async count(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('tenant_admins')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

export class ConsoleSetupTokenRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(t: ConsoleSetupTokenRecord): Promise<void> {
    await sweeper.tick(this.db, t.createdAt);
    await this.db.insertInto('console_setup_tokens').values(setupTokens.toRow(t)).execute();
  }

  /** Consume-once before it expires: true for exactly one caller. */
  consume(tenantId: string, tokenHash: string, now: number): Promise<boolean> {
    return consumeOnce(this.db, 'console_setup_tokens', {
      key: { tenant_id: tenantId, token_hash: tokenHash },
      column: 'consumed_at',
      expiresColumn: 'expires_at',
      now,
    });
  }

  /** A live (unconsumed, unexpired) link, to tell the setup page whether to show its form. */
  async live(tenantId: string, tokenHash: string, now: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('console_setup_tokens')
      .select('token_hash')
      .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('token_hash', '=', tokenHash), eb('consumed_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst();
    return row !== undefined;
  }
}
