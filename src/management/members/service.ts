import type { MembershipVault } from '../../connect/vault.js';
import type { Actor } from '../../events/catalogue.js';
import { revokeMembershipCredentials } from '../../credentials/service.js';
import { errors } from '../../kernel/errors.js';
import { isUniqueViolation } from '../../storage/db.js';
import type { MemberRecord, MemberWithUser } from '../../storage/repos/members.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

/** Organization roles (docs/members.md). */
export const ROLES = ['admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export function memberView(m: MemberRecord | MemberWithUser) {
  return {
    organization_id: m.organizationId,
    user_id: m.userId,
    role: m.role,
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

  async add(tenantId: string, actor: Actor, orgId: string, userId: string, role: Role) {
    const now = this.deps.clock.now();
    const member: MemberRecord = { tenantId, organizationId: orgId, userId, role, createdAt: now, updatedAt: now };
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const r = reposOf(this.deps, trx);
        if (!(await r.organizations.findShared(tenantId, orgId, this.deps.db.dialect))) throw errors.notFound('organization not found');
        if (!(await r.users.find(tenantId, userId))) throw errors.invalidRequest('user_id: no such user');
        await r.members.insert(member);
        await this.deps.events.record(trx, {
          tenantId,
          type: 'member.added',
          organizationId: orgId,
          actor,
          data: { organization_id: orgId, user_id: userId, role },
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.conflict('user_id: the user is already a member');
      throw err;
    }
    return member;
  }

  /** No role, or the current one, changes nothing: no write, no event. */
  async changeRole(tenantId: string, actor: Actor, orgId: string, userId: string, role: Role | undefined) {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const repo = reposOf(this.deps, trx).members;
      const current = await repo.find(tenantId, orgId, userId);
      if (!current) throw errors.notFound('member not found');
      if (role === undefined || current.role === role) return current;
      const updated = await repo.setRole(tenantId, orgId, userId, current.role, role, this.deps.clock.now());
      if (!updated) throw errors.conflict('the role changed concurrently; retry');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'member.role_changed',
        organizationId: orgId,
        actor,
        data: { organization_id: orgId, user_id: userId, role, previous_role: current.role },
      });
      return updated;
    });
  }

  /** Ends the membership: its credentials revoked, its connected accounts disconnected (docs/connected-accounts.md). */
  async remove(tenantId: string, actor: Actor, orgId: string, userId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const removed = await reposOf(this.deps, trx).members.delete(tenantId, orgId, userId);
      if (!removed) throw errors.notFound('member not found');
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
        data: { organization_id: orgId, user_id: userId, role: removed.role },
      });
    });
  }
}
