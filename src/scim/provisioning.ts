/**
 * What a SCIM change does to the organization: membership follows `active`, and the member's
 * role follows the connection's group → role mapping. Everything runs inside the caller's
 * transaction, with its events.
 */

import { pickMappedRole } from '../kernel/role-mapping.js';
import type { MembershipVault } from '../connect/vault.js';
import { revokeMembershipCredentials } from '../credentials/service.js';
import type { Actor } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Dialect, Executor } from '../storage/db.js';
import type { DirectoryUserRecord } from '../storage/repos/directory-users.js';
import { type Repos, repos } from '../storage/repos/index.js';

/** The authenticated connection a SCIM request acts for. */
export interface ScimConnection {
  id: string;
  tenantId: string;
  organizationId: string;
  /** group displayName (lower case) → role. Empty: the directory does not manage roles. */
  groupRoles: Record<string, string>;
}

export interface ScimDeps {
  db: Executor;
  dialect: Dialect;
  clock: Clock;
  events: EventRecorder;
  /** Disconnects a former member's connected accounts. */
  vault: MembershipVault;
}

/** The repositories over the root database, or over `trx` inside a transaction. */
export const scimRepos = (deps: Pick<ScimDeps, 'db' | 'dialect'>, trx?: Executor): Repos => repos(trx ?? deps.db, deps.dialect);

export const scimActor = (conn: ScimConnection): Actor => ({ type: 'scim', id: conn.id });

/** The role the directory wants for a user, or null when the connection maps no groups. */
export async function desiredRole(groups: Repos['directoryGroups'], conn: ScimConnection, memberId: string): Promise<string | null> {
  if (Object.keys(conn.groupRoles).length === 0) return null;
  const roles = (await groups.groupNamesOf(memberId)).map((n) => conn.groupRoles[n]).filter((r): r is string => !!r);
  return pickMappedRole(roles) ?? 'member';
}

/**
 * Makes an active SCIM user a member with the mapped role (member.added / member.role_changed).
 * The actor is the connection, or the API key whose mapping change triggered it.
 */
export async function ensureMember(
  deps: Omit<ScimDeps, 'vault'>,
  trx: Executor,
  conn: ScimConnection,
  du: DirectoryUserRecord,
  actor: Actor = scimActor(conn),
): Promise<void> {
  const { members, directoryGroups, roles } = scimRepos(deps, trx);
  const wanted = await desiredRole(directoryGroups, conn, du.id);
  // A role deleted since the connection named it is not given: the tenant's default role instead.
  const role = wanted === null || (await roles.usableIn(conn.tenantId, conn.organizationId)).has(wanted) ? wanted : await roles.defaultRole(conn.tenantId);
  const existing = await members.find(conn.tenantId, conn.organizationId, du.userId);
  const base = { tenantId: conn.tenantId, organizationId: conn.organizationId, actor };
  if (!existing) {
    const now = deps.clock.now();
    // No group maps the user: the tenant's default role for new members (docs/authorization.md).
    const r = role ?? (await roles.defaultRole(conn.tenantId));
    await members.insert({ tenantId: conn.tenantId, organizationId: conn.organizationId, userId: du.userId, role: r, createdAt: now, updatedAt: now });
    await deps.events.record(trx, { ...base, type: 'member.added', data: { organization_id: conn.organizationId, user_id: du.userId, role: r } });
  } else if (role !== null && existing.role !== role) {
    const updated = await members.setRole(conn.tenantId, conn.organizationId, du.userId, existing.role, role, deps.clock.now());
    if (!updated) return;
    await deps.events.record(trx, {
      ...base,
      type: 'member.role_changed',
      data: { organization_id: conn.organizationId, user_id: du.userId, role, previous_role: existing.role, roles: [role] },
    });
  }
}

/**
 * Removes the user's membership (member.removed; its credentials revoked and its connected
 * accounts disconnected) and, when this directory created the user,
 * ends their hosted-login sessions (session.revoked). Sessions are tenant-wide, not per
 * organization, and a directory links any existing tenant user with a matching email, so a user
 * the directory only linked keeps their sessions whatever other memberships they have (losing
 * this membership already ends access to this organization): otherwise one organization's
 * directory could sign out, again and again, anyone it can link by email.
 */
export async function removeMember(deps: ScimDeps, trx: Executor, conn: ScimConnection, du: DirectoryUserRecord): Promise<void> {
  const { members, sessions, refreshTokens } = scimRepos(deps, trx);
  const removed = await members.delete(conn.tenantId, conn.organizationId, du.userId);
  if (!removed) return;
  // Tokens signed in to the organization end with the membership (docs/authorization.md).
  await refreshTokens.revokeForOrganization(conn.tenantId, conn.organizationId, du.userId, deps.clock.now());
  const base = { tenantId: conn.tenantId, organizationId: conn.organizationId, actor: scimActor(conn) };
  const membership = { tenantId: conn.tenantId, organizationId: conn.organizationId, userId: du.userId };
  await revokeMembershipCredentials(trx, { dialect: deps.dialect, events: deps.events, now: deps.clock.now() }, membership, base.actor);
  await deps.vault.endMembership(trx, membership, base.actor);
  await deps.events.record(trx, { ...base, type: 'member.removed', data: { organization_id: conn.organizationId, user_id: du.userId, role: removed.role } });
  if (!du.ownsUser) return;
  for (const sessionId of await sessions.revokeAllForUser(conn.tenantId, du.userId, deps.clock.now())) {
    await deps.events.record(trx, { ...base, type: 'session.revoked', data: { user_id: du.userId, session_id: sessionId, reason: 'deprovisioned' } });
  }
}

/** Re-applies the role mapping to the given SCIM users (after group membership or name changes). */
export async function syncRoles(deps: ScimDeps, trx: Executor, conn: ScimConnection, memberIds: Iterable<string>): Promise<void> {
  if (Object.keys(conn.groupRoles).length === 0) return;
  const users = scimRepos(deps, trx).directoryUsers;
  for (const id of new Set(memberIds)) {
    const du = await users.find(conn.id, id);
    if (du?.active) await ensureMember(deps, trx, conn, du);
  }
}
