/**
 * The MFA policy (`off | optional | required`) of the tenant and of each organization, stored in
 * `mfa_policies` (organization_id '' = the tenant's own). At sign-in the strictest of the tenant's
 * and the user's organizations' applies (src/screens/mfa/service.ts policyFor); docs/passkeys.md.
 */
import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import { DEFAULT_MFA_POLICY, type MfaPolicy, strictestPolicy } from '../../storage/repos/mfa.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

/** The tenant's row in mfa_policies. */
const TENANT = '';

export interface TenantMfaPolicyView {
  policy: MfaPolicy;
  updated_at: string | null;
}

export interface OrganizationMfaPolicyView {
  organization_id: string;
  policy: MfaPolicy | null;
  effective_policy: MfaPolicy;
  updated_at: string | null;
}

export class MfaPolicyService {
  constructor(private readonly deps: ManagementDeps) {}

  async getTenant(tenantId: string): Promise<TenantMfaPolicyView> {
    const stored = await reposOf(this.deps).mfa.policy(tenantId, TENANT);
    return { policy: stored?.policy ?? DEFAULT_MFA_POLICY, updated_at: stored ? iso(stored.updatedAt) : null };
  }

  async setTenant(tenantId: string, actor: Actor, policy: MfaPolicy): Promise<TenantMfaPolicyView> {
    const now = this.deps.clock.now();
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      await reposOf(this.deps, trx).mfa.setPolicy(tenantId, TENANT, policy, now);
      await this.deps.events.record(trx, { tenantId, type: 'mfa_policy.updated', organizationId: null, actor, data: { organization_id: null, policy } });
    });
    return { policy, updated_at: iso(now) };
  }

  async getOrganization(tenantId: string, orgId: string): Promise<OrganizationMfaPolicyView> {
    const r = reposOf(this.deps);
    if (!(await r.organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
    const [tenant, own] = await Promise.all([r.mfa.policy(tenantId, TENANT), r.mfa.policy(tenantId, orgId)]);
    return organizationView(orgId, tenant?.policy ?? DEFAULT_MFA_POLICY, own);
  }

  /** Sets (or, with null, clears) an organization's policy. */
  async setOrganization(tenantId: string, actor: Actor, orgId: string, policy: MfaPolicy | null): Promise<OrganizationMfaPolicyView> {
    const now = this.deps.clock.now();
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
      if (policy === null) await r.mfa.deletePolicy(tenantId, orgId);
      else await r.mfa.setPolicy(tenantId, orgId, policy, now);
      await this.deps.events.record(trx, { tenantId, type: 'mfa_policy.updated', organizationId: orgId, actor, data: { organization_id: orgId, policy } });
      const tenant = await r.mfa.policy(tenantId, TENANT);
      return organizationView(orgId, tenant?.policy ?? DEFAULT_MFA_POLICY, policy === null ? undefined : { policy, updatedAt: now });
    });
  }
}

function organizationView(orgId: string, tenantPolicy: MfaPolicy, own: { policy: MfaPolicy; updatedAt: number } | undefined): OrganizationMfaPolicyView {
  return {
    organization_id: orgId,
    policy: own?.policy ?? null,
    effective_policy: own ? strictestPolicy(tenantPolicy, own.policy) : tenantPolicy,
    updated_at: own ? iso(own.updatedAt) : null,
  };
}
