import type { Expression, Kysely, SqlBool } from 'kysely';
import { compareAndSetRow, lockRow } from '../atomic.js';
import { bool, codec, json, num } from '../codec.js';
import type { Database } from '../schema.js';

/** A SCIM user of one directory connection, linked to a tenant user. */
export interface DirectoryUserRecord {
  id: string;
  tenantId: string;
  connectionId: string;
  organizationId: string;
  userId: string;
  ownsUser: boolean;
  userName: string;
  externalId: string | null;
  displayName: string | null;
  givenName: string | null;
  familyName: string | null;
  email: string | null;
  emailType: string | null;
  active: boolean;
  /** The stored SCIM resource (no id, meta or password). */
  resource: Record<string, unknown>;
  version: number;
  createdAt: number;
  updatedAt: number;
}

export interface ListQuery {
  where?: Expression<SqlBool>;
  /** A column of directory_users (allow-listed by the caller). */
  sortBy: 'id' | 'user_name_lc' | 'external_id' | 'display_name' | 'created_at' | 'updated_at';
  descending: boolean;
  offset: number;
  limit: number;
}

/** Ids per `IN (…)` list or multi-row insert: far below every database's bound-parameter limit. */
export const ID_CHUNK = 500;

export function chunks<T>(items: T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const stored = codec<DirectoryUserRecord>()('directory_users', {
  id: true,
  tenantId: true,
  connectionId: true,
  organizationId: true,
  userId: true,
  ownsUser: bool,
  userName: true,
  externalId: true,
  displayName: true,
  givenName: true,
  familyName: true,
  email: true,
  emailType: true,
  active: bool,
  resource: json<Record<string, unknown>>(),
  version: num,
  createdAt: true,
  updatedAt: true,
});
/** The row, with userName lower-cased (unique per connection: SCIM userName is caseExact false). */
const toRow = (u: DirectoryUserRecord) => ({ ...stored.toRow(u), user_name_lc: u.userName.toLowerCase() });

export class DirectoryUserRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(u: DirectoryUserRecord): Promise<void> {
    await this.db.insertInto('directory_users').values(toRow(u)).execute();
  }

  /** Takes the row's write lock for the rest of the transaction (see lockRow). False: no such row. */
  lock(connectionId: string, id: string): Promise<boolean> {
    return lockRow(this.db, 'directory_users', { connection_id: connectionId, id }, 'version');
  }

  async find(connectionId: string, id: string): Promise<DirectoryUserRecord | undefined> {
    const row = await this.db
      .selectFrom('directory_users')
      .selectAll()
      .where((eb) => eb.and({ connection_id: connectionId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async findByUserId(connectionId: string, userId: string): Promise<DirectoryUserRecord | undefined> {
    const row = await this.db
      .selectFrom('directory_users')
      .selectAll()
      .where((eb) => eb.and({ connection_id: connectionId, user_id: userId }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /**
   * Whether one of the organization's directory connections created this user's account. A
   * directory that merely linked an existing account by email does not make it the organization's
   * (any organization can name any email in SCIM).
   */
  async createdUser(tenantId: string, organizationId: string, userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('directory_users')
      .select('id')
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, user_id: userId, owns_user: 1 }))
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * The directory connections that created this user's account (`owns_user`), with their
   * organization, for the console's administrator look-up: those organizations' administrators
   * control the account (its profile follows the directory, deprovisioning ends its sessions).
   * At most `limit` (a user has one creator; the cap only bounds the answer). Served by
   * `directory_users_tenant_user` (tenant_id, user_id).
   */
  async creatorsOf(
    tenantId: string,
    userId: string,
    limit: number,
  ): Promise<Array<{ organizationId: string; organizationName: string; connectionId: string; connectionName: string }>> {
    const rows = await this.db
      .selectFrom('directory_users')
      .innerJoin('directory_connections', (j) =>
        j.onRef('directory_connections.id', '=', 'directory_users.connection_id').onRef('directory_connections.tenant_id', '=', 'directory_users.tenant_id'),
      )
      .innerJoin('organizations', (j) =>
        j.onRef('organizations.id', '=', 'directory_users.organization_id').onRef('organizations.tenant_id', '=', 'directory_users.tenant_id'),
      )
      .select([
        'directory_users.organization_id',
        'organizations.name as organization_name',
        'directory_users.connection_id',
        'directory_connections.name as connection_name',
      ])
      .where('directory_users.tenant_id', '=', tenantId)
      .where('directory_users.user_id', '=', userId)
      .where('directory_users.owns_user', '=', 1)
      .orderBy('directory_users.created_at')
      .orderBy('directory_users.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      organizationId: r.organization_id,
      organizationName: r.organization_name,
      connectionId: r.connection_id,
      connectionName: r.connection_name,
    }));
  }

  /**
   * Existing ids among `ids` in this connection (to validate group members). Distinct ids are
   * queried in chunks, so no statement nears the bound-parameter limits (SQLite 32,766,
   * PostgreSQL 65,535) whatever the caller passes.
   */
  async existingIds(connectionId: string, ids: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const chunk of chunks([...new Set(ids)])) {
      const rows = await this.db.selectFrom('directory_users').select('id').where('connection_id', '=', connectionId).where('id', 'in', chunk).execute();
      for (const r of rows) found.add(r.id);
    }
    return found;
  }

  async list(connectionId: string, q: ListQuery): Promise<DirectoryUserRecord[]> {
    let query = this.db.selectFrom('directory_users').selectAll().where('connection_id', '=', connectionId);
    if (q.where) query = query.where(q.where);
    const dir = q.descending ? 'desc' : 'asc';
    const rows = await query.orderBy(q.sortBy, dir).orderBy('id', dir).offset(q.offset).limit(q.limit).execute();
    return rows.map(stored.toRecord);
  }

  /** A page of the connection's SCIM users by id, after the id `after` (GET /v1/…/directory/connections/{id}/users). */
  async page(connectionId: string, after: string | undefined, limit: number): Promise<DirectoryUserRecord[]> {
    let query = this.db.selectFrom('directory_users').selectAll().where('connection_id', '=', connectionId);
    if (after !== undefined) query = query.where('id', '>', after);
    return (await query.orderBy('id').limit(limit).execute()).map(stored.toRecord);
  }

  async count(connectionId: string, where?: Expression<SqlBool>): Promise<number> {
    let query = this.db
      .selectFrom('directory_users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('connection_id', '=', connectionId);
    if (where) query = query.where(where);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  /** Active users of the connection (role re-computation after a mapping change). */
  async listActive(connectionId: string): Promise<DirectoryUserRecord[]> {
    const rows = await this.db.selectFrom('directory_users').selectAll().where('connection_id', '=', connectionId).where('active', '=', 1).execute();
    return rows.map(stored.toRecord);
  }

  /** Compare-and-set on `version`: writes `u` (with version+1) only if the stored version is `u.version`. */
  async replace(u: DirectoryUserRecord, now: number): Promise<DirectoryUserRecord | undefined> {
    const { id: _id, tenant_id: _t, connection_id: _c, created_at: _ca, ...set } = toRow(u);
    const row = await compareAndSetRow(this.db, 'directory_users', {
      key: { connection_id: u.connectionId, id: u.id },
      seen: { version: u.version },
      set: { ...set, version: u.version + 1, updated_at: now },
    });
    return row && stored.toRecord(row);
  }

  async delete(connectionId: string, id: string): Promise<DirectoryUserRecord | undefined> {
    const row = await this.db
      .deleteFrom('directory_users')
      .where((eb) => eb.and({ connection_id: connectionId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }
}
