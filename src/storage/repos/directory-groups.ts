import type { Expression, Kysely, SqlBool } from 'kysely';
import { compareAndSetRow, lockRow } from '../atomic.js';
import { codec, num } from '../codec.js';
import type { Database } from '../schema.js';
import { chunks } from './directory-users.js';

export interface DirectoryGroupRecord {
  id: string;
  tenantId: string;
  connectionId: string;
  displayName: string;
  externalId: string | null;
  version: number;
  createdAt: number;
  updatedAt: number;
}

export interface GroupMember {
  id: string;
  userName: string;
  displayName: string | null;
}

export interface GroupListQuery {
  where?: Expression<SqlBool>;
  sortBy: 'id' | 'display_name_lc' | 'external_id' | 'created_at' | 'updated_at';
  descending: boolean;
  offset: number;
  limit: number;
}

const stored = codec<DirectoryGroupRecord>()('directory_groups', {
  id: true,
  tenantId: true,
  connectionId: true,
  displayName: true,
  externalId: true,
  version: num,
  createdAt: true,
  updatedAt: true,
});

export class DirectoryGroupRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(g: DirectoryGroupRecord): Promise<void> {
    await this.db
      .insertInto('directory_groups')
      .values({ ...stored.toRow(g), display_name_lc: g.displayName.toLowerCase() })
      .execute();
  }

  /** Takes the row's write lock for the rest of the transaction (see lockRow). False: no such row. */
  lock(connectionId: string, id: string): Promise<boolean> {
    return lockRow(this.db, 'directory_groups', { connection_id: connectionId, id }, 'version');
  }

  async find(connectionId: string, id: string): Promise<DirectoryGroupRecord | undefined> {
    const row = await this.db
      .selectFrom('directory_groups')
      .selectAll()
      .where((eb) => eb.and({ connection_id: connectionId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async list(connectionId: string, q: GroupListQuery): Promise<DirectoryGroupRecord[]> {
    let query = this.db.selectFrom('directory_groups').selectAll().where('connection_id', '=', connectionId);
    if (q.where) query = query.where(q.where);
    const dir = q.descending ? 'desc' : 'asc';
    return (await query.orderBy(q.sortBy, dir).orderBy('id', dir).offset(q.offset).limit(q.limit).execute()).map(stored.toRecord);
  }

  /** A page of the connection's groups by id, after the id `after`, each with its member count. */
  async pageWithCounts(connectionId: string, after: string | undefined, limit: number): Promise<Array<DirectoryGroupRecord & { memberCount: number }>> {
    let query = this.db
      .selectFrom('directory_groups as g')
      .selectAll('g')
      .select((eb) =>
        eb
          .selectFrom('directory_group_members as m')
          .select((c) => c.fn.countAll<number | string>().as('n'))
          .whereRef('m.group_id', '=', 'g.id')
          .as('member_count'),
      )
      .where('g.connection_id', '=', connectionId);
    if (after !== undefined) query = query.where('g.id', '>', after);
    const rows = await query.orderBy('g.id').limit(limit).execute();
    return rows.map(({ member_count, ...row }) => ({ ...stored.toRecord(row), memberCount: Number(member_count ?? 0) }));
  }

  async count(connectionId: string, where?: Expression<SqlBool>): Promise<number> {
    let query = this.db
      .selectFrom('directory_groups')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('connection_id', '=', connectionId);
    if (where) query = query.where(where);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  /** Compare-and-set on version for displayName/externalId changes. */
  async update(g: DirectoryGroupRecord, now: number): Promise<DirectoryGroupRecord | undefined> {
    const row = await compareAndSetRow(this.db, 'directory_groups', {
      key: { connection_id: g.connectionId, id: g.id },
      seen: { version: g.version },
      set: { display_name: g.displayName, display_name_lc: g.displayName.toLowerCase(), external_id: g.externalId, version: g.version + 1, updated_at: now },
    });
    return row && stored.toRecord(row);
  }

  async delete(connectionId: string, id: string): Promise<DirectoryGroupRecord | undefined> {
    const row = await this.db
      .deleteFrom('directory_groups')
      .where((eb) => eb.and({ connection_id: connectionId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async members(groupId: string): Promise<GroupMember[]> {
    const rows = await this.db
      .selectFrom('directory_group_members as m')
      .innerJoin('directory_users as u', 'u.id', 'm.member_id')
      .select(['u.id', 'u.user_name', 'u.display_name'])
      .where('m.group_id', '=', groupId)
      .orderBy('u.id')
      .execute();
    return rows.map((r) => ({ id: r.id, userName: r.user_name, displayName: r.display_name }));
  }

  /** Members of several groups in one query (a page of a group list). */
  async membersOfGroups(groupIds: string[]): Promise<Map<string, GroupMember[]>> {
    const out = new Map<string, GroupMember[]>(groupIds.map((id) => [id, []]));
    for (const chunk of chunks([...out.keys()])) {
      const rows = await this.db
        .selectFrom('directory_group_members as m')
        .innerJoin('directory_users as u', 'u.id', 'm.member_id')
        .select(['m.group_id', 'u.id', 'u.user_name', 'u.display_name'])
        .where('m.group_id', 'in', chunk)
        .orderBy('u.id')
        .execute();
      for (const r of rows) out.get(r.group_id)?.push({ id: r.id, userName: r.user_name, displayName: r.display_name });
    }
    return out;
  }

  async memberIds(groupId: string): Promise<string[]> {
    return (await this.db.selectFrom('directory_group_members').select('member_id').where('group_id', '=', groupId).execute()).map((r) => r.member_id);
  }

  /**
   * Adds members (ignoring ones already there, race-free); returns the ids actually added.
   * Distinct ids, in chunks (bound-parameter limits).
   */
  async addMembers(tenantId: string, groupId: string, memberIds: string[]): Promise<string[]> {
    const added: string[] = [];
    for (const chunk of chunks([...new Set(memberIds)])) {
      const rows = await this.db
        .insertInto('directory_group_members')
        .values(chunk.map((member_id) => ({ tenant_id: tenantId, group_id: groupId, member_id })))
        .onConflict((oc) => oc.columns(['group_id', 'member_id']).doNothing())
        .returning('member_id')
        .execute();
      added.push(...rows.map((r) => r.member_id));
    }
    return added;
  }

  /**
   * Removes members; returns the ids actually removed. Distinct ids, in chunks: a PUT that
   * empties a large group removes every current member, however many requests added them.
   */
  async removeMembers(groupId: string, memberIds: string[]): Promise<string[]> {
    const removed: string[] = [];
    for (const chunk of chunks([...new Set(memberIds)])) {
      const rows = await this.db
        .deleteFrom('directory_group_members')
        .where('group_id', '=', groupId)
        .where('member_id', 'in', chunk)
        .returning('member_id')
        .execute();
      removed.push(...rows.map((r) => r.member_id));
    }
    return removed;
  }

  /** Lower-cased displayNames of the groups a SCIM user belongs to. */
  async groupNamesOf(memberId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('directory_group_members as m')
      .innerJoin('directory_groups as g', 'g.id', 'm.group_id')
      .select('g.display_name_lc')
      .where('m.member_id', '=', memberId)
      .execute();
    return rows.map((r) => r.display_name_lc);
  }

  async groupsOf(memberId: string): Promise<Array<{ id: string; displayName: string }>> {
    const rows = await this.db
      .selectFrom('directory_group_members as m')
      .innerJoin('directory_groups as g', 'g.id', 'm.group_id')
      .select(['g.id', 'g.display_name'])
      .where('m.member_id', '=', memberId)
      .orderBy('g.id')
      .execute();
    return rows.map((r) => ({ id: r.id, displayName: r.display_name }));
  }
}
