/**
 * The WebAuthn policy of an organization: the AAGUIDs (authenticator models) its members may
 * register passkeys with. `null` = unrestricted; `[]` = no passkeys. Enforced at registration
 * (src/screens/mfa/passkeys.ts); docs/passkeys.md.
 */
import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import type { OrganizationRecord } from '../../storage/repos/organizations.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

export function webauthnPolicyView(o: OrganizationRecord) {
  return { organization_id: o.id, aaguid_allowlist: o.webauthnAaguidAllowlist, updated_at: iso(o.updatedAt) };
}

/** AAGUIDs are compared lower-case; a list keeps the first occurrence of each. */
export const normalizeAaguids = (list: string[]) => [...new Set(list.map((a) => a.toLowerCase()))];

export class WebauthnPolicyService {
  constructor(private readonly deps: ManagementDeps) {}

  async get(tenantId: string, orgId: string): Promise<OrganizationRecord> {
    const org = await reposOf(this.deps).organizations.find(tenantId, orgId);
    if (!org) throw errors.notFound('organization not found');
    return org;
  }

  async set(tenantId: string, actor: Actor, orgId: string, allowlist: string[] | null): Promise<OrganizationRecord> {
    const list = allowlist === null ? null : normalizeAaguids(allowlist);
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const org = await reposOf(this.deps, trx).organizations.setWebauthnAllowlist(tenantId, orgId, list, this.deps.clock.now());
      if (!org) throw errors.notFound('organization not found');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'webauthn_policy.updated',
        organizationId: orgId,
        actor,
        data: { organization_id: orgId, aaguid_allowlist: list },
      });
      return org;
    });
  }
}
