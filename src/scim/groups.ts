/**
 * SCIM Groups of one connection. Membership changes are applied in SQL (no loading of whole
 * groups to patch one member) and re-apply the connection's group → role mapping.
 */

import { newId } from '../kernel/ids.js';
import { isUniqueViolation, type Executor } from '../storage/db.js';
import type { DirectoryGroupRecord, GroupListQuery } from '../storage/repos/directory-groups.js';
import { checkIfMatch, withRetry } from './concurrency.js';
import { ScimError, scimErrors } from './errors.js';
import type { AttributeMap } from './filter/attributes.js';
import { filterToSql } from '../storage/scim-filter.js';
import { listPage, type ListParams } from './list.js';
import { type ScimConnection, type ScimDeps, scimActor, scimRepos, syncRoles } from './provisioning.js';
import { coerceGroup, GROUP_SCHEMA } from './resources.js';
import { type GroupChange, groupPatchChanges } from './group-patch.js';

export const GROUP_FILTERS: AttributeMap = {
  id: { kind: 'string', column: 'directory_groups.id', caseExact: true },
  externalid: { kind: 'string', column: 'directory_groups.external_id', caseExact: true },
  displayname: { kind: 'string', column: 'directory_groups.display_name_lc', caseExact: false, storedLower: true },
  'members.value': { kind: 'member', groupColumn: 'directory_groups.id' },
  'meta.created': { kind: 'datetime', column: 'directory_groups.created_at' },
  'meta.lastmodified': { kind: 'datetime', column: 'directory_groups.updated_at' },
};

export const GROUP_SORT_KEYS: Record<string, GroupListQuery['sortBy']> = {
  id: 'id',
  displayname: 'display_name_lc',
  externalid: 'external_id',
  'meta.created': 'created_at',
  'meta.lastmodified': 'updated_at',
};

const uniqueness = (err: unknown) => (isUniqueViolation(err) ? scimErrors.uniqueness('a group with this displayName already exists in this directory') : err);

export class ScimGroups {
  constructor(private readonly deps: ScimDeps) {}

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return withRetry(() => this.deps.events.transaction(this.deps.db, fn)).catch((err: unknown) => {
      throw uniqueness(err);
    });
  }

  private event(
    trx: Executor,
    conn: ScimConnection,
    type: 'directory.group.created' | 'directory.group.updated' | 'directory.group.deleted',
    g: DirectoryGroupRecord,
    extra: Record<string, unknown> = {},
  ) {
    return this.deps.events.record(trx, {
      tenantId: conn.tenantId,
      organizationId: conn.organizationId,
      actor: scimActor(conn),
      type,
      data: { connection_id: conn.id, scim_id: g.id, display_name: g.displayName, ...extra },
    });
  }

  private async checkMembers(trx: Executor, conn: ScimConnection, ids: string[]) {
    const known = await scimRepos(this.deps, trx).directoryUsers.existingIds(conn.id, [...new Set(ids)]);
    const unknown = ids.find((id) => !known.has(id));
    if (unknown !== undefined) throw scimErrors.invalidValue(`members: no User '${unknown}' in this directory`);
  }

  async create(conn: ScimConnection, body: unknown): Promise<DirectoryGroupRecord> {
    const input = coerceGroup(body);
    return this.tx(async (trx) => {
      await this.checkMembers(trx, conn, input.memberIds);
      const now = this.deps.clock.now();
      const g: DirectoryGroupRecord = {
        id: newId('dsg', now),
        tenantId: conn.tenantId,
        connectionId: conn.id,
        displayName: input.displayName,
        externalId: input.externalId,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      const repo = scimRepos(this.deps, trx).directoryGroups;
      await repo.insert(g);
      const added = await repo.addMembers(conn.tenantId, g.id, input.memberIds);
      await this.event(trx, conn, 'directory.group.created', g, { members_added: added.length });
      await syncRoles(this.deps, trx, conn, added);
      return g;
    });
  }

  async get(conn: ScimConnection, id: string): Promise<DirectoryGroupRecord> {
    const g = await scimRepos(this.deps).directoryGroups.find(conn.id, id);
    if (!g) throw scimErrors.notFound(`Group ${id} not found`);
    return g;
  }

  members(g: DirectoryGroupRecord) {
    return scimRepos(this.deps).directoryGroups.members(g.id);
  }

  membersOfGroups(groups: DirectoryGroupRecord[]) {
    return scimRepos(this.deps).directoryGroups.membersOfGroups(groups.map((g) => g.id));
  }

  async list(conn: ScimConnection, p: ListParams) {
    const where = p.filter ? filterToSql(p.filter, { attributes: GROUP_FILTERS, coreSchema: GROUP_SCHEMA }) : undefined;
    return listPage(scimRepos(this.deps).directoryGroups, conn.id, where, p);
  }

  async replace(conn: ScimConnection, id: string, body: unknown, ifMatch: string | undefined): Promise<DirectoryGroupRecord> {
    const input = coerceGroup(body);
    return this.tx(async (trx) => {
      const cur = await this.current(trx, conn, id, ifMatch);
      await this.checkMembers(trx, conn, input.memberIds);
      return this.apply(trx, conn, cur, [
        { kind: 'set', displayName: input.displayName, externalId: input.externalId },
        { kind: 'members', mode: 'replace', ids: input.memberIds },
      ]);
    });
  }

  async patch(conn: ScimConnection, id: string, body: unknown, ifMatch: string | undefined): Promise<DirectoryGroupRecord> {
    const changes = groupPatchChanges(body);
    return this.tx(async (trx) => {
      const cur = await this.current(trx, conn, id, ifMatch);
      for (const c of changes) if (c.kind === 'members' && c.ids !== 'all' && c.mode !== 'remove') await this.checkMembers(trx, conn, c.ids);
      return this.apply(trx, conn, cur, changes);
    });
  }

  async delete(conn: ScimConnection, id: string, ifMatch: string | undefined): Promise<void> {
    await this.tx(async (trx) => {
      const cur = await this.current(trx, conn, id, ifMatch);
      const repo = scimRepos(this.deps, trx).directoryGroups;
      const memberIds = await repo.memberIds(cur.id);
      await repo.delete(conn.id, cur.id);
      await this.event(trx, conn, 'directory.group.deleted', cur);
      await syncRoles(this.deps, trx, conn, memberIds);
    });
  }

  private async current(trx: Executor, conn: ScimConnection, id: string, ifMatch: string | undefined) {
    const repo = scimRepos(this.deps, trx).directoryGroups;
    const cur = (await repo.lock(conn.id, id)) ? await repo.find(conn.id, id) : undefined;
    if (!cur) throw scimErrors.notFound(`Group ${id} not found`);
    checkIfMatch(ifMatch, cur.version);
    return cur;
  }

  private async apply(trx: Executor, conn: ScimConnection, cur: DirectoryGroupRecord, changes: GroupChange[]): Promise<DirectoryGroupRecord> {
    const repo = scimRepos(this.deps, trx).directoryGroups;
    let next = { ...cur };
    const touched = new Set<string>();
    let added = 0;
    let removed = 0;
    for (const c of changes) {
      if (c.kind === 'set') {
        if (c.id !== undefined && c.id !== cur.id) throw scimErrors.mutability('id is read-only');
        if (c.displayName !== undefined) next.displayName = c.displayName;
        if (c.externalId !== undefined) next.externalId = c.externalId;
        continue;
      }
      const before = c.mode === 'replace' || c.ids === 'all' ? await repo.memberIds(cur.id) : [];
      if (c.mode === 'add') {
        const ids = c.ids === 'all' ? [] : c.ids;
        const a = await repo.addMembers(conn.tenantId, cur.id, ids);
        a.forEach((id) => touched.add(id));
        added += a.length;
      } else {
        const wanted = c.mode === 'replace' && c.ids !== 'all' ? new Set(c.ids) : new Set<string>();
        const toRemove = c.ids === 'all' || c.mode === 'replace' ? before.filter((id) => !wanted.has(id)) : c.ids;
        const r = await repo.removeMembers(cur.id, toRemove);
        r.forEach((id) => touched.add(id));
        removed += r.length;
        if (c.mode === 'replace') {
          const a = await repo.addMembers(conn.tenantId, cur.id, [...wanted]);
          a.forEach((id) => touched.add(id));
          added += a.length;
        }
      }
    }
    const renamed = next.displayName !== cur.displayName;
    const fields = [
      ...(renamed ? ['displayName'] : []),
      ...(next.externalId !== cur.externalId ? ['externalId'] : []),
      ...(added || removed ? ['members'] : []),
    ];
    if (fields.length === 0) return cur;
    const updated = await repo.update(next, this.deps.clock.now());
    if (!updated) throw new ScimError(409, undefined, 'retry');
    next = updated;
    await this.event(trx, conn, 'directory.group.updated', next, { fields, members_added: added, members_removed: removed });
    if (renamed) (await repo.memberIds(cur.id)).forEach((id) => touched.add(id));
    await syncRoles(this.deps, trx, conn, touched);
    return next;
  }
}
