/**
 * Organizations' roles (docs/authorization.md): tenant-wide definitions and an organization's own,
 * each granting permissions that resource servers declare; the default role of new members; and
 * the authorization check for backends that do not read tokens.
 */
import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { ResourceServerRecord, ResourceServerStore } from '../../oauth/types.js';
import { isUniqueViolation } from '../../storage/db.js';
import type { Repos } from '../../storage/repos/index.js';
import type { RolePermission, RoleRecord } from '../../storage/repos/roles.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

export interface RoleInput {
  key?: string | undefined;
  name?: string | undefined;
  description?: string | null | undefined;
  permissions?: RolePermission[] | undefined;
}

export function roleView(r: RoleRecord) {
  return {
    id: r.id,
    key: r.key,
    organization_id: r.organizationId,
    name: r.name,
    description: r.description,
    permissions: r.permissions,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

const notFound = () => errors.notFound('role not found');

/** Each permission must be one its resource server declares (else 400). */
async function checkPermissions(r: Repos, tenantId: string, permissions: RolePermission[]): Promise<RolePermission[]> {
  const servers = new Map<string, ResourceServerRecord | undefined>();
  const seen = new Set<string>();
  const out: RolePermission[] = [];
  for (const p of permissions) {
    if (!servers.has(p.resource_server_id)) servers.set(p.resource_server_id, await r.resourceServers.find(tenantId, p.resource_server_id));
    const rs = servers.get(p.resource_server_id);
    if (!rs) throw errors.invalidRequest(`permissions: no resource server ${p.resource_server_id}`);
    if (!rs.scopes.includes(p.permission)) throw errors.invalidRequest(`permissions: ${rs.identifier} declares no permission ${p.permission}`);
    const k = `${p.resource_server_id} ${p.permission}`;
    if (!seen.has(k)) out.push({ resource_server_id: p.resource_server_id, permission: p.permission });
    seen.add(k);
  }
  return out;
}

/**
 * The role keys `keys` if each is usable in the organization (its own roles, then tenant-wide
 * ones), else a 400 naming the first that is not: another organization's role is not usable here.
 */
export async function resolveRoles(r: Repos, tenantId: string, organizationId: string, keys: string[]): Promise<string[]> {
  const usable = await r.roles.usableIn(tenantId, organizationId);
  const out = [...new Set(keys)];
  if (out.length === 0) throw errors.invalidRequest('roles: at least one role');
  for (const k of out) if (!usable.has(k)) throw errors.invalidRequest(`roles: no role ${k} in this organization`);
  return out;
}

/**
 * SSO and SCIM role mappings name roles usable in the organization (its own, or tenant-wide):
 * otherwise 400 naming the field as sent (`group_roles.<group>`, `default_role`) and the key.
 */
export async function checkMappedRoles(
  r: Repos,
  tenantId: string,
  organizationId: string,
  field: string,
  roles: string | Readonly<Record<string, string>> | undefined,
): Promise<void> {
  if (roles === undefined) return;
  const named: Array<[string, string]> = typeof roles === 'string' ? [[field, roles]] : Object.entries(roles).map(([group, k]) => [`${field}.${group}`, k]);
  if (named.length === 0) return;
  const usable = await r.roles.usableIn(tenantId, organizationId);
  for (const [path, k] of named) if (!usable.has(k)) throw errors.invalidRequest(`${path}: no role ${k} in this organization`);
}

export interface Grants {
  /** The member's role keys. */
  roles: string[];
  /** The permissions the roles grant, each with its resource server's id and identifier. */
  permissions: Array<{ resourceServerId: string; identifier: string; permission: string }>;
}

/** What a member's roles grant in an organization, read now; undefined when the user is no member. */
export async function grantsOf(r: Repos, tenantId: string, organizationId: string, userId: string): Promise<Grants | undefined> {
  const member = await r.members.find(tenantId, organizationId, userId);
  if (!member) return undefined;
  const usable = await r.roles.usableIn(tenantId, organizationId);
  const identifiers = new Map<string, string | undefined>();
  const seen = new Set<string>();
  const permissions: Grants['permissions'] = [];
  for (const key of member.roles) {
    for (const p of usable.get(key)?.permissions ?? []) {
      if (!identifiers.has(p.resource_server_id))
        identifiers.set(p.resource_server_id, (await r.resourceServers.find(tenantId, p.resource_server_id))?.identifier);
      const identifier = identifiers.get(p.resource_server_id);
      const k = `${p.resource_server_id} ${p.permission}`;
      if (identifier === undefined || seen.has(k)) continue;
      seen.add(k);
      permissions.push({ resourceServerId: p.resource_server_id, identifier, permission: p.permission });
    }
  }
  return { roles: member.roles, permissions };
}

/**
 * What a client's roles grant in the organization it is bound to, for the audience of its token:
 * one statement (the roles and the organization); the audience's resource servers come from
 * `resourceServers` (the token endpoint's cache, which has just looked them up). Undefined when the
 * organization is gone; role keys no longer defined there are left out.
 */
export async function clientGrantsOf(
  r: Repos,
  resourceServers: ResourceServerStore,
  tenantId: string,
  organizationId: string,
  keys: readonly string[],
  audience: readonly string[],
): Promise<Grants | undefined> {
  const usable = await r.roles.usableInExisting(tenantId, organizationId);
  if (!usable) return undefined;
  const servers = new Map<string, string>();
  for (const identifier of audience) {
    const rs = await resourceServers.findByIdentifier(tenantId, identifier);
    if (rs) servers.set(rs.id, rs.identifier);
  }
  const roles = keys.filter((k) => usable.has(k));
  const seen = new Set<string>();
  const permissions: Grants['permissions'] = [];
  for (const key of roles) {
    for (const p of usable.get(key)!.permissions) {
      const identifier = servers.get(p.resource_server_id);
      const k = `${p.resource_server_id} ${p.permission}`;
      if (identifier === undefined || seen.has(k)) continue;
      seen.add(k);
      permissions.push({ resourceServerId: p.resource_server_id, identifier, permission: p.permission });
    }
  }
  return { roles, permissions };
}

export class RoleService {
  constructor(private readonly deps: ManagementDeps) {}

  async #requireOrg(r: Repos, tenantId: string, orgId: string | null) {
    if (orgId !== null && !(await r.organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
  }

  async list(tenantId: string, orgId: string | null, after: string | undefined, limit: number) {
    const r = reposOf(this.deps);
    await this.#requireOrg(r, tenantId, orgId);
    return r.roles.list(tenantId, orgId, after, limit);
  }

  async get(tenantId: string, orgId: string | null, key: string) {
    const r = reposOf(this.deps);
    await this.#requireOrg(r, tenantId, orgId);
    const role = await r.roles.find(tenantId, orgId, key);
    if (!role) throw notFound();
    return role;
  }

  async create(tenantId: string, actor: Actor, orgId: string | null, input: RoleInput & { key: string; name: string }) {
    const now = this.deps.clock.now();
    try {
      return await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const r = reposOf(this.deps, trx);
        await this.#requireOrg(r, tenantId, orgId);
        const role: RoleRecord = {
          id: newId('rol', now),
          tenantId,
          organizationId: orgId,
          key: input.key,
          name: input.name,
          description: input.description ?? null,
          permissions: await checkPermissions(r, tenantId, input.permissions ?? []),
          createdAt: now,
          updatedAt: now,
        };
        await r.roles.insert(role);
        await this.deps.events.record(trx, { tenantId, type: 'role.created', organizationId: orgId, actor, data: eventData(role) });
        return role;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.conflict('key: a role with this key exists');
      throw err;
    }
  }

  /** Nothing changes: no write, no event. */
  async update(tenantId: string, actor: Actor, orgId: string | null, key: string, input: RoleInput) {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      await this.#requireOrg(r, tenantId, orgId);
      const current = await r.roles.find(tenantId, orgId, key);
      if (!current) throw notFound();
      const next: RoleRecord = {
        ...current,
        name: input.name ?? current.name,
        description: input.description === undefined ? current.description : input.description,
        permissions: input.permissions ? await checkPermissions(r, tenantId, input.permissions) : current.permissions,
        updatedAt: this.deps.clock.now(),
      };
      const same =
        next.name === current.name && next.description === current.description && JSON.stringify(next.permissions) === JSON.stringify(current.permissions);
      if (same) return current;
      if (!(await r.roles.update(next))) throw notFound();
      await this.deps.events.record(trx, { tenantId, type: 'role.updated', organizationId: orgId, actor, data: eventData(next) });
      return next;
    });
  }

  /**
   * A role some member holds is not deleted (409) unless `reassign` names the role they get
   * instead (usable in each of their organizations); each reassignment is a member.role_changed.
   */
  async delete(tenantId: string, actor: Actor, orgId: string | null, key: string, reassign: string | undefined): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      await this.#requireOrg(r, tenantId, orgId);
      const current = await r.roles.find(tenantId, orgId, key);
      if (!current) throw notFound();
      if (orgId === null && (await r.roles.defaultRole(tenantId)) === key)
        throw errors.conflict('this role is the default role for new members; choose another first');
      let holders = await r.members.holding(tenantId, key, orgId);
      // An organization that defines its own role of this key: its members hold that one.
      if (orgId === null) {
        const own = new Map<string, boolean>();
        const kept = [];
        for (const m of holders) {
          if (!own.has(m.organizationId)) own.set(m.organizationId, (await r.roles.find(tenantId, m.organizationId, key)) !== undefined);
          if (!own.get(m.organizationId)) kept.push(m);
        }
        holders = kept;
      }
      if (reassign === key) throw errors.invalidRequest('reassign: must name another role');
      if (holders.length > 0 && reassign === undefined) throw errors.conflict(`${holders.length} member(s) hold this role; pass ?reassign=<role key>`);
      await r.roles.delete(tenantId, current.id);
      const now = this.deps.clock.now();
      for (const m of holders) {
        const [to] = await resolveRoles(r, tenantId, m.organizationId, [reassign!]);
        const roles = [...new Set(m.roles.map((k) => (k === key ? to! : k)))];
        const updated = await r.members.setRoles(tenantId, m.organizationId, m.userId, m.roles, roles, now);
        if (!updated) throw errors.conflict('a member changed concurrently; retry');
        await this.deps.events.record(trx, {
          tenantId,
          type: 'member.role_changed',
          organizationId: m.organizationId,
          actor,
          data: { organization_id: m.organizationId, user_id: m.userId, role: updated.role, previous_role: m.role, roles },
        });
      }
      await this.deps.events.record(trx, {
        tenantId,
        type: 'role.deleted',
        organizationId: orgId,
        actor,
        data: { id: current.id, key, organization_id: orgId },
      });
    });
  }

  defaultRole(tenantId: string): Promise<string> {
    return reposOf(this.deps).roles.defaultRole(tenantId);
  }

  async setDefaultRole(tenantId: string, actor: Actor, key: string): Promise<string> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.roles.find(tenantId, null, key))) throw errors.invalidRequest(`default_role: no tenant-wide role ${key}`);
      const previous = await r.roles.defaultRole(tenantId);
      if (previous === key) return;
      await r.roles.setDefaultRole(tenantId, key, this.deps.clock.now());
      await this.deps.events.record(trx, {
        tenantId,
        type: 'role.settings_updated',
        organizationId: null,
        actor,
        data: { default_role: key, previous_default_role: previous },
      });
    });
    return key;
  }

  /**
   * POST /v1/authorize_check: whether the user's roles in the organization grant `permission` of
   * the resource server `resource` names (its identifier or id), else of any; read now (no cache).
   */
  async check(tenantId: string, input: { userId: string; organizationId: string; permission: string; resource?: string | undefined }) {
    const r = reposOf(this.deps);
    if (!(await r.organizations.find(tenantId, input.organizationId))) throw errors.notFound('organization not found');
    const grants = await grantsOf(r, tenantId, input.organizationId, input.userId);
    if (!grants) return { allowed: false, roles: [] as string[] };
    const allowed = grants.permissions.some(
      (p) => p.permission === input.permission && (input.resource === undefined || input.resource === p.identifier || input.resource === p.resourceServerId),
    );
    return { allowed, roles: grants.roles };
  }
}

const eventData = (r: RoleRecord) => ({ id: r.id, key: r.key, organization_id: r.organizationId, name: r.name, permissions: r.permissions });
