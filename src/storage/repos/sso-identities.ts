import type { Kysely } from 'kysely';
import { codec } from '../codec.js';
import type { Database } from '../schema.js';

/** An upstream identity (connection + `sub`) linked to a user. */
export interface SsoIdentityRecord {
  connectionId: string;
  subject: string;
  tenantId: string;
  userId: string;
  createdAt: number;
  lastLoginAt: number;
}

const stored = codec<SsoIdentityRecord>()('sso_identities', {
  connectionId: true,
  subject: true,
  tenantId: true,
  userId: true,
  createdAt: true,
  lastLoginAt: true,
});

export class SsoIdentityRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async find(connectionId: string, subject: string): Promise<SsoIdentityRecord | undefined> {
    const row = await this.db.selectFrom('sso_identities').selectAll().where((eb) => eb.and({ connection_id: connectionId, subject })).executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async insert(i: SsoIdentityRecord): Promise<void> {
    await this.db.insertInto('sso_identities').values(stored.toRow(i)).execute();
  }

  async touch(connectionId: string, subject: string, now: number): Promise<void> {
    await this.db.updateTable('sso_identities').set({ last_login_at: now }).where((eb) => eb.and({ connection_id: connectionId, subject })).execute();
  }
}
