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
    const row = await this.db
      .selectFrom('sso_identities')
      .selectAll()
      .where((eb) => eb.and({ connection_id: connectionId, subject }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async insert(i: SsoIdentityRecord): Promise<void> {
    await this.db.insertInto('sso_identities').values(stored.toRow(i)).execute();
  }

  /**
   * The SSO connections this user signs in through (one entry per connection, however many
   * upstream subjects it linked), with their organization and protocol, for the console's
   * administrator look-up: whoever that organization's identity provider vouches for signs in as
   * this account. At most `limit`. Served by `sso_identities_user` (tenant_id, user_id).
   */
  async connectionsOf(
    tenantId: string,
    userId: string,
    limit: number,
  ): Promise<Array<{ organizationId: string; organizationName: string; connectionId: string; connectionName: string; protocol: string }>> {
    const rows = await this.db
      .selectFrom('sso_identities')
      .innerJoin('sso_connections', (j) =>
        j.onRef('sso_connections.id', '=', 'sso_identities.connection_id').onRef('sso_connections.tenant_id', '=', 'sso_identities.tenant_id'),
      )
      .innerJoin('organizations', (j) =>
        j.onRef('organizations.id', '=', 'sso_connections.organization_id').onRef('organizations.tenant_id', '=', 'sso_connections.tenant_id'),
      )
      .select([
        'sso_connections.organization_id',
        'organizations.name as organization_name',
        'sso_identities.connection_id',
        'sso_connections.name as connection_name',
        'sso_connections.protocol',
      ])
      .select((eb) => eb.fn.min('sso_identities.created_at').as('first_linked'))
      .where('sso_identities.tenant_id', '=', tenantId)
      .where('sso_identities.user_id', '=', userId)
      .groupBy(['sso_connections.organization_id', 'organizations.name', 'sso_identities.connection_id', 'sso_connections.name', 'sso_connections.protocol'])
      .orderBy('first_linked')
      .orderBy('sso_identities.connection_id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      organizationId: r.organization_id,
      organizationName: r.organization_name,
      connectionId: r.connection_id,
      connectionName: r.connection_name,
      protocol: r.protocol,
    }));
  }

  /** Removes every upstream identity of this user at this connection; how many there were. */
  async deleteForUser(tenantId: string, userId: string, connectionId: string): Promise<number> {
    const r = await this.db
      .deleteFrom('sso_identities')
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId, connection_id: connectionId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async touch(connectionId: string, subject: string, now: number): Promise<void> {
    await this.db
      .updateTable('sso_identities')
      .set({ last_login_at: now })
      .where((eb) => eb.and({ connection_id: connectionId, subject }))
      .execute();
  }
}
