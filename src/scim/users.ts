/** SCIM Users of one connection: create, read, list, replace, patch, delete (RFC 7644 §3). */
import SCIMMY from 'scimmy';
import { newId } from '../kernel/ids.js';
import { normalizeEmail } from '../users/emails.js';
import { ownsDomain } from '../sso/service.js';
import { isUniqueViolation, type Executor } from '../storage/db.js';
import type { DirectoryUserRecord, ListQuery } from '../storage/repos/directory-users.js';
import type { UserRecord } from '../storage/repos/users.js';
import { fromScimmy, ScimError, scimErrors } from './errors.js';
import type { AttributeMap } from './filter/attributes.js';
import { filterToSql } from '../storage/scim-filter.js';
import { listPage, type ListParams } from './list.js';
import { ensureMember, removeMember, type ScimConnection, type ScimDeps, scimActor, scimRepos } from './provisioning.js';
import { coerceUser, USER_SCHEMA, type UserFields, userFields, userToScim } from './resources.js';
import { checkPatchBody, patchMessage } from './patch-compat.js';
import { checkIfMatch, withRetry } from './concurrency.js';

/** Filterable User attributes (lower-cased paths) → columns. Anything else is invalidFilter. */
export const USER_FILTERS: AttributeMap = {
  id: { kind: 'string', column: 'directory_users.id', caseExact: true },
  externalid: { kind: 'string', column: 'directory_users.external_id', caseExact: true },
  username: { kind: 'string', column: 'directory_users.user_name_lc', caseExact: false, storedLower: true },
  displayname: { kind: 'string', column: 'directory_users.display_name', caseExact: false },
  'name.givenname': { kind: 'string', column: 'directory_users.given_name', caseExact: false },
  'name.familyname': { kind: 'string', column: 'directory_users.family_name', caseExact: false },
  'emails.value': { kind: 'string', column: 'directory_users.email', caseExact: false, storedLower: true },
  'emails.type': { kind: 'string', column: 'directory_users.email_type', caseExact: false },
  active: { kind: 'boolean', column: 'directory_users.active' },
  'meta.created': { kind: 'datetime', column: 'directory_users.created_at' },
  'meta.lastmodified': { kind: 'datetime', column: 'directory_users.updated_at' },
};

export const USER_SORT_KEYS: Record<string, ListQuery['sortBy']> = {
  id: 'id',
  username: 'user_name_lc',
  externalid: 'external_id',
  displayname: 'display_name',
  'meta.created': 'created_at',
  'meta.lastmodified': 'updated_at',
};

/** The tenant user's email: the SCIM primary email, else an email-shaped userName. */
function tenantEmail(f: UserFields): string {
  const email = f.email ?? (f.userName.includes('@') ? f.userName : null);
  if (!email || !/^[^\s@]+@[^\s@]+$/.test(email)) throw scimErrors.invalidValue('an email is required: emails[].value or an email-shaped userName');
  return normalizeEmail(email);
}

const displayNameOf = (f: UserFields) =>
  f.displayName ?? (((f.resource.name as { formatted?: string } | undefined)?.formatted ?? [f.givenName, f.familyName].filter(Boolean).join(' ')) || null);

const uniqueness = (err: unknown) => (isUniqueViolation(err) ? scimErrors.uniqueness('userName or email already exists in this directory') : err);

export class ScimUsers {
  constructor(private readonly deps: ScimDeps) {}

  private tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return withRetry(() => this.deps.events.transaction(this.deps.db, fn)).catch((err: unknown) => {
      throw uniqueness(err);
    });
  }

  private record(
    trx: Executor,
    conn: ScimConnection,
    type: 'directory.user.created' | 'directory.user.updated' | 'directory.user.deleted' | 'directory.user.deactivated' | 'directory.user.reactivated',
    du: DirectoryUserRecord,
    extra: Record<string, unknown> = {},
  ) {
    return this.deps.events.record(trx, {
      tenantId: conn.tenantId,
      organizationId: conn.organizationId,
      actor: scimActor(conn),
      type,
      data: { connection_id: conn.id, scim_id: du.id, user_id: du.userId, user_name: du.userName, ...extra },
    });
  }

  async create(conn: ScimConnection, body: unknown): Promise<DirectoryUserRecord> {
    const f = coerceUser(body);
    const email = tenantEmail(f);
    return this.tx(async (trx) => {
      const now = this.deps.clock.now();
      const { users, directoryUsers: repo } = scimRepos(this.deps, trx);
      let user = await users.findByEmail(conn.tenantId, email);
      const ownsUser = !user;
      if (user && (await repo.findByUserId(conn.id, user.id))) throw scimErrors.uniqueness('a user with this email is already provisioned by this directory');
      if (user && !(await this.mayLink(trx, conn, user))) {
        throw scimErrors.uniqueness(
          "a user with this email already exists and this directory cannot link it: only users whose email is in the organization's verified domain, and who are not tenant administrators, can be linked",
        );
      }
      if (!user) {
        user = {
          id: newId('user', now),
          tenantId: conn.tenantId,
          email,
          name: displayNameOf(f),
          emailVerified: false,
          passwordHash: null,
          passwordSetBy: null,
          createdAt: now,
          updatedAt: now,
        };
        await users.insert(user);
        await this.deps.events.record(trx, {
          tenantId: conn.tenantId,
          type: 'user.created',
          organizationId: null,
          actor: scimActor(conn),
          data: { user_id: user.id },
        });
      }
      const { resource: _r, ...cols } = f;
      const du: DirectoryUserRecord = {
        id: newId('dsu', now),
        tenantId: conn.tenantId,
        connectionId: conn.id,
        organizationId: conn.organizationId,
        userId: user.id,
        ownsUser,
        ...cols,
        resource: f.resource,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      await repo.insert(du);
      await this.record(trx, conn, 'directory.user.created', du, { active: du.active, linked_existing_user: !ownsUser });
      if (du.active) await ensureMember(this.deps, trx, conn, du);
      return du;
    });
  }

  /**
   * Whether this directory may link an existing tenant user by email (docs/scim.md): only one
   * whose email is in its organization's verified domain, never a tenant administrator — the
   * rule of `POST …/members`, which an organization's own key cannot use to attach existing users.
   */
  private async mayLink(trx: Executor, conn: ScimConnection, user: UserRecord): Promise<boolean> {
    const r = scimRepos(this.deps, trx);
    const org = await r.organizations.find(conn.tenantId, conn.organizationId);
    return org !== undefined && ownsDomain(org, user.email) && !(await r.tenantAdmins.isAdmin(conn.tenantId, user.id));
  }

  async get(conn: ScimConnection, id: string): Promise<DirectoryUserRecord> {
    const du = await scimRepos(this.deps).directoryUsers.find(conn.id, id);
    if (!du) throw scimErrors.notFound(`User ${id} not found`);
    return du;
  }

  groupsOf(du: DirectoryUserRecord) {
    return scimRepos(this.deps).directoryGroups.groupsOf(du.id);
  }

  async list(conn: ScimConnection, p: ListParams) {
    const where = p.filter ? filterToSql(p.filter, { attributes: USER_FILTERS, coreSchema: USER_SCHEMA }) : undefined;
    return listPage(scimRepos(this.deps).directoryUsers, conn.id, where, p);
  }

  async replace(conn: ScimConnection, id: string, body: unknown, ifMatch: string | undefined): Promise<DirectoryUserRecord> {
    const f = coerceUser(body);
    return this.tx(async (trx) => {
      const cur = await this.current(trx, conn, id, ifMatch);
      return this.apply(trx, conn, cur, f);
    });
  }

  async patch(conn: ScimConnection, id: string, body: unknown, ifMatch: string | undefined): Promise<DirectoryUserRecord> {
    checkPatchBody(body);
    return this.tx(async (trx) => {
      const cur = await this.current(trx, conn, id, ifMatch);
      const { meta: _m, ...scim } = userToScim(cur, '');
      const message = patchMessage(body, scim);
      let patched: unknown;
      try {
        patched = await message.apply(new SCIMMY.Schemas.User(scim));
      } catch (err) {
        throw fromScimmy(err) ?? (err instanceof TypeError ? scimErrors.invalidValue(err.message) : err);
      }
      if (!patched) return cur;
      const { id: _i, meta: _m2, groups: _g, ...resource } = JSON.parse(JSON.stringify(patched)) as Record<string, unknown>;
      return this.apply(trx, conn, cur, userFields(resource));
    });
  }

  async delete(conn: ScimConnection, id: string, ifMatch: string | undefined): Promise<void> {
    await this.tx(async (trx) => {
      const cur = await this.current(trx, conn, id, ifMatch);
      await scimRepos(this.deps, trx).directoryUsers.delete(conn.id, cur.id);
      await removeMember(this.deps, trx, conn, cur);
      await this.record(trx, conn, 'directory.user.deleted', cur);
    });
  }

  private async current(trx: Executor, conn: ScimConnection, id: string, ifMatch: string | undefined) {
    const repo = scimRepos(this.deps, trx).directoryUsers;
    const cur = (await repo.lock(conn.id, id)) ? await repo.find(conn.id, id) : undefined;
    if (!cur) throw scimErrors.notFound(`User ${id} not found`);
    checkIfMatch(ifMatch, cur.version);
    return cur;
  }

  /** Writes the new state (compare-and-set on version), then the membership and profile effects. */
  private async apply(trx: Executor, conn: ScimConnection, cur: DirectoryUserRecord, f: UserFields): Promise<DirectoryUserRecord> {
    const { resource, ...cols } = f;
    const changed = (Object.keys(cols) as Array<keyof typeof cols>).filter((k) => cols[k] !== cur[k]);
    if (changed.length === 0 && JSON.stringify(resource) === JSON.stringify(cur.resource)) return cur;
    const next = await scimRepos(this.deps, trx).directoryUsers.replace({ ...cur, ...cols, resource }, this.deps.clock.now());
    if (!next) throw new ScimError(409, undefined, 'retry');
    if (cur.ownsUser) await this.syncProfile(trx, conn, cur, f);
    const fields = changedAttributes(cur.resource, resource);
    if (fields.length) await this.record(trx, conn, 'directory.user.updated', next, { fields });
    if (cur.active && !next.active) {
      await removeMember(this.deps, trx, conn, next);
      await this.record(trx, conn, 'directory.user.deactivated', next);
    } else if (!cur.active && next.active) {
      await ensureMember(this.deps, trx, conn, next);
      await this.record(trx, conn, 'directory.user.reactivated', next);
    }
    return next;
  }

  /** Profile changes reach the tenant user only when this SCIM user created it. */
  private async syncProfile(trx: Executor, conn: ScimConnection, cur: DirectoryUserRecord, f: UserFields) {
    const users = scimRepos(this.deps, trx).users;
    const user = await users.find(conn.tenantId, cur.userId);
    if (!user) return;
    const email = tenantEmail(f);
    const name = displayNameOf(f);
    // The directory is authoritative: a new address applies at once, unverified (docs/account.md).
    const patch = { ...(email !== user.email ? { email, emailVerified: false } : {}), ...(name !== user.name ? { name } : {}) };
    if (Object.keys(patch).length === 0) return;
    await users.update(conn.tenantId, user.id, patch, this.deps.clock.now());
    await this.deps.events.record(trx, {
      tenantId: conn.tenantId,
      type: 'user.updated',
      organizationId: null,
      actor: scimActor(conn),
      data: { user_id: user.id, fields: Object.keys(patch).map((k) => (k === 'emailVerified' ? 'email_verified' : k)) },
    });
  }
}

/** Top-level SCIM attributes that differ (active has its own events). */
function changedAttributes(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => k !== 'schemas' && k !== 'active' && JSON.stringify(before[k]) !== JSON.stringify(after[k])).sort();
}
