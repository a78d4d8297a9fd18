/**
 * Directory connections (SCIM) of an organization and their tokens. Deleting a connection
 * removes its SCIM records and token but deprovisions nobody: memberships stay (docs/scim.md).
 */
import { checkMappedRoles } from '../roles/service.js';
import type { Actor } from '../../events/catalogue.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { errors } from '../../kernel/errors.js';
import { newId, newSecret } from '../../kernel/ids.js';
import { SCIM_TOKEN_PREFIX } from '../../scim/auth.js';
import type { DirectoryConnectionRecord } from '../../storage/repos/directory-connections.js';
import type { DirectoryGroupRecord } from '../../storage/repos/directory-groups.js';
import type { DirectoryUserRecord } from '../../storage/repos/directory-users.js';
import { changesOf } from '../../kernel/changes.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';
import { ensureMember, type ScimConnection } from '../../scim/provisioning.js';

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;

export interface ConnectionInput {
  name?: string;
  group_roles?: Record<string, string>;
  rate_limit_per_minute?: number;
}

export function connectionView(c: DirectoryConnectionRecord) {
  return {
    id: c.id,
    organization_id: c.organizationId,
    name: c.name,
    group_roles: c.groupRoles,
    rate_limit_per_minute: c.rateLimitPerMinute,
    has_token: c.hasToken,
    token_created_at: c.tokenCreatedAt === null ? null : iso(c.tokenCreatedAt),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

/** The emails of a stored SCIM resource (value, type, primary), whatever else the directory sent. */
function emailsOf(resource: Record<string, unknown>): Array<{ value: string; type: string | null; primary: boolean }> {
  const emails = Array.isArray(resource.emails) ? (resource.emails as unknown[]) : [];
  return emails.flatMap((e) => {
    if (typeof e !== 'object' || e === null) return [];
    const { value, type, primary } = e as Record<string, unknown>;
    if (typeof value !== 'string') return [];
    return [{ value, type: typeof type === 'string' ? type : null, primary: primary === true }];
  });
}

/** A user a directory provisioned over SCIM, as /v1 lists it (never a password). */
export function directoryUserView(u: DirectoryUserRecord) {
  return {
    id: u.id,
    user_id: u.userId,
    external_id: u.externalId,
    user_name: u.userName,
    display_name: u.displayName,
    given_name: u.givenName,
    family_name: u.familyName,
    email: u.email,
    emails: emailsOf(u.resource),
    active: u.active,
    created_at: iso(u.createdAt),
    updated_at: iso(u.updatedAt),
  };
}

export function directoryGroupView(g: DirectoryGroupRecord & { memberCount: number }) {
  return {
    id: g.id,
    external_id: g.externalId,
    display_name: g.displayName,
    member_count: g.memberCount,
    created_at: iso(g.createdAt),
    updated_at: iso(g.updatedAt),
  };
}

/** Group names are matched case-insensitively (SCIM displayName is caseExact false). */
const lowerKeys = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k.trim().toLowerCase(), v]));

export class DirectoryService {
  constructor(private readonly deps: ManagementDeps) {}

  private event(
    trx: Parameters<ManagementDeps['events']['record']>[0],
    tenantId: string,
    orgId: string,
    actor: Actor,
    type: 'directory.connection.created' | 'directory.connection.updated' | 'directory.connection.deleted' | 'directory.token.created',
    data: Record<string, unknown>,
  ) {
    return this.deps.events.record(trx, { tenantId, organizationId: orgId, actor, type, data });
  }

  async create(tenantId: string, actor: Actor, orgId: string, input: ConnectionInput & { name: string }) {
    const now = this.deps.clock.now();
    const c: DirectoryConnectionRecord = {
      id: newId('dir', now),
      tenantId,
      organizationId: orgId,
      name: input.name,
      groupRoles: lowerKeys(input.group_roles ?? {}),
      rateLimitPerMinute: input.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
      hasToken: false,
      tokenCreatedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
      await checkMappedRoles(r, tenantId, orgId, 'group_roles', c.groupRoles);
      await r.directoryConnections.insert(c);
      await this.event(trx, tenantId, orgId, actor, 'directory.connection.created', { connection_id: c.id, name: c.name });
    });
    return c;
  }

  async get(tenantId: string, orgId: string, id: string) {
    const c = await reposOf(this.deps).directoryConnections.find(tenantId, orgId, id);
    if (!c) throw errors.notFound('directory connection not found');
    return c;
  }

  async list(tenantId: string, orgId: string, after: string | undefined, limit: number) {
    const r = reposOf(this.deps);
    if (!(await r.organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
    return r.directoryConnections.list(tenantId, orgId, after, limit);
  }

  /** A page of the SCIM users the connection provisioned (404 when the organization has no such connection). */
  async listUsers(tenantId: string, orgId: string, id: string, after: string | undefined, limit: number) {
    await this.get(tenantId, orgId, id);
    return reposOf(this.deps).directoryUsers.page(id, after, limit);
  }

  /** A page of the connection's SCIM groups with their member counts. */
  async listGroups(tenantId: string, orgId: string, id: string, after: string | undefined, limit: number) {
    await this.get(tenantId, orgId, id);
    return reposOf(this.deps).directoryGroups.pageWithCounts(id, after, limit);
  }

  /** A changed role mapping is applied to the connection's active users at once. */
  async update(tenantId: string, actor: Actor, orgId: string, id: string, input: ConnectionInput) {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const groupRoles = input.group_roles === undefined ? undefined : lowerKeys(input.group_roles);
      const repo = reposOf(this.deps, trx).directoryConnections;
      const current = await repo.find(tenantId, orgId, id);
      if (!current) throw errors.notFound('directory connection not found');
      await checkMappedRoles(reposOf(this.deps, trx), tenantId, orgId, 'group_roles', groupRoles);
      const changes = changesOf(current, { name: input.name, groupRoles, rateLimitPerMinute: input.rate_limit_per_minute });
      // Nothing changes: no write, no updated_at bump, no event.
      if (Object.keys(changes).length === 0) return current;
      const c = await repo.update(tenantId, orgId, id, changes, this.deps.clock.now());
      if (!c) throw errors.notFound('directory connection not found');
      const apiNames = { name: 'name', groupRoles: 'group_roles', rateLimitPerMinute: 'rate_limit_per_minute' } as const;
      const fields = (Object.keys(changes) as Array<keyof typeof apiNames>).map((k) => apiNames[k]);
      await this.event(trx, tenantId, orgId, actor, 'directory.connection.updated', { connection_id: id, fields });
      if (changes.groupRoles !== undefined) {
        const conn: ScimConnection = { id, tenantId, organizationId: orgId, groupRoles: c.groupRoles };
        const deps = { db: trx, dialect: this.deps.db.dialect, clock: this.deps.clock, events: this.deps.events };
        for (const du of await reposOf(this.deps, trx).directoryUsers.listActive(id)) await ensureMember(deps, trx, conn, du, actor);
      }
      return c;
    });
  }

  async delete(tenantId: string, actor: Actor, orgId: string, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const removed = await reposOf(this.deps, trx).directoryConnections.delete(tenantId, orgId, id);
      if (!removed) throw errors.notFound('directory connection not found');
      await this.event(trx, tenantId, orgId, actor, 'directory.connection.deleted', { connection_id: id, name: removed.name });
    });
  }

  /** Mints the connection's token; the previous one stops working in the same statement. */
  async mintToken(tenantId: string, actor: Actor, orgId: string, connectionId: string): Promise<string> {
    const token = newSecret(SCIM_TOKEN_PREFIX);
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const now = this.deps.clock.now();
      if (!(await reposOf(this.deps, trx).directoryConnections.setToken(tenantId, orgId, connectionId, sha256Hex(token), now))) {
        throw errors.notFound('directory connection not found');
      }
      await this.event(trx, tenantId, orgId, actor, 'directory.token.created', { connection_id: connectionId });
    });
    return token;
  }
}
