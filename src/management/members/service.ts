import type { MembershipVault } from '../../connect/vault.js';
import type { Actor } from '../../events/catalogue.js';
import { revokeMembershipCredentials } from '../../credentials/service.js';
import { errors } from '../../kernel/errors.js';
import { isUniqueViolation } from '../../storage/db.js';
import type { MemberRecord, MemberWithUser } from '../../storage/repos/members.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';
import { resolveRoles } from '../roles/service.js';

/** A role key: what `/v1/roles` and memberships name roles by. */
export const ROLE_KEY = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The roles a request gives: `roles`, or `role` (the older single-role form); undefined when neither. */
export function rolesOf(body: { role?: string | undefined; roles?: string[] | undefined }): string[] | undefined {
  if (body.roles !== undefined && body.role !== undefined && !(body.roles.length === 1 && body.roles[0] === body.role))
    throw errors.invalidRequest('give roles or role, not both');
  return body.roles ?? (body.role !== undefined ? [body.role] : undefined);
}

export function memberView(m: MemberRecord | MemberWithUser) {
  return {
    organization_id: m.organizationId,
    user_id: m.userId,
    role: m.role,
    roles: m.roles,
    ...('email' in m ? { user: { id: m.userId, email: m.email, name: m.name } } : {}),
    created_at: iso(m.createdAt),
    updated_at: iso(m.updatedAt),
  };
}

export class MemberService {
  constructor(private readonly deps: ManagementDeps & { vault: MembershipVault }) {}

  private async requireOrg(tenantId: string, orgId: string) {
    if (!(await reposOf(this.deps).organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
  }

  async list(tenantId: string, orgId: string, after: string | undefined, limit: number) {
    await this.requireOrg(tenantId, orgId);
    return reposOf(this.deps).members.list(tenantId, orgId, after, limit);
  }

  /** `roles` undefined: the tenant's default role for new members. */
  async add(tenantId: string, actor: Actor, orgId: string, userId: string, requested: string[] | undefined) {
    const now = this.deps.clock.now();
    let member: MemberRecord | undefined;
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const r = reposOf(this.deps, trx);
        if (!(await r.organizations.findShared(tenantId, orgId, this.deps.db.dialect))) throw errors.notFound('organization not found');
        if (!(await r.users.find(tenantId, userId))) throw errors.invalidRequest('user_id: no such user');
        const roles = await resolveRoles(r, tenantId, orgId, requested ?? [await r.roles.defaultRole(tenantId)]);
        const role = roles[0]!;
        member = { tenantId, organizationId: orgId, userId, role, roles, createdAt: now, updatedAt: now };
        await r.members.insert(member);
        await this.deps.events.record(trx, {
          tenantId,
          type: 'member.added',
          organizationId: orgId,
          actor,
          data: { organization_id: orgId, user_id: userId, role, roles },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.conflict('user_id: the user is already a member');
      throw err;
    }
    return member!;
  }

  /** No roles, or the current ones, change nothing: no write, no event. A role must be usable in the organization (its own or tenant-wide). */
  async changeRole(tenantId: string, actor: Actor, orgId: string, userId: string, requested: string[] | undefined) {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      const current = await r.members.find(tenantId, orgId, userId);
      if (!current) throw errors.notFound('member not found');
      if (requested === undefined) return current;
      const roles = await resolveRoles(r, tenantId, orgId, requested);
      if (JSON.stringify(roles) === JSON.stringify(current.roles)) return current;
      const updated = await r.members.setRoles(tenantId, orgId, userId, current.roles, roles, this.deps.clock.now());
      if (!updated) throw errors.conflict('the role changed concurrently; retry');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'member.role_changed',
        organizationId: orgId,
        actor,
        data: { organization_id: orgId, user_id: userId, role: updated.role, previous_role: current.role, roles },
      });
      return updated;
    });
  }

  /** Ends the membership: its credentials revoked, its connected accounts disconnected (docs/connected-accounts.md). */
  async remove(tenantId: string, actor: Actor, orgId: string, userId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      const removed = await r.members.delete(tenantId, orgId, userId);
      if (!removed) throw errors.notFound('member not found');
      // Tokens signed in to the organization end with the membership (docs/authorization.md).
      await r.refreshTokens.revokeForOrganization(tenantId, orgId, userId, this.deps.clock.now());
      await revokeMembershipCredentials(
        trx,
        { dialect: this.deps.db.dialect, events: this.deps.events, now: this.deps.clock.now() },
        { tenantId, organizationId: orgId, userId },
        actor,
      );
      await this.deps.vault.endMembership(trx, { tenantId, organizationId: orgId, userId }, actor);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'member.removed',
        organizationId: orgId,
        actor,
        data: { organization_id: orgId, user_id: userId, role: removed.role, roles: removed.roles },
      });
    });
  }
}
