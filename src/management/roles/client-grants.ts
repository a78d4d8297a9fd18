/**
 * Machine clients in an organization (docs/authorization.md, "Machine clients"): a
 * client_credentials client is bound to one organization with roles there, managed under
 * `/v1/organizations/{orgId}/client_grants` — so an organization's key binds clients only to its
 * own organization, with roles usable there (its own or tenant-wide).
 */
import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import { type ClientRecord, GRANT_TYPE } from '../../oauth/types.js';
import type { Repos } from '../../storage/repos/index.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';
import { resolveRoles } from './service.js';

export function clientGrantView(c: ClientRecord) {
  return {
    client_id: c.id,
    client_name: c.clientName,
    organization_id: c.organizationGrant!.organizationId,
    roles: c.organizationGrant!.roles,
    updated_at: iso(c.updatedAt),
  };
}

const notFound = () => errors.notFound('this client is not bound to this organization');

export class ClientGrantService {
  constructor(
    private readonly deps: ManagementDeps,
    /** Drops the client from this instance's caches (its next token reads the binding). */
    private readonly changed: (tenantId: string, clientId: string) => void,
  ) {}

  async #requireOrg(r: Repos, tenantId: string, orgId: string) {
    if (!(await r.organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
  }

  async list(tenantId: string, orgId: string, after: string | undefined, limit: number) {
    const r = reposOf(this.deps);
    await this.#requireOrg(r, tenantId, orgId);
    return r.oauthClients.listByOrganization(tenantId, orgId, after, limit);
  }

  async get(tenantId: string, orgId: string, clientId: string) {
    const r = reposOf(this.deps);
    await this.#requireOrg(r, tenantId, orgId);
    const c = await r.oauthClients.find(tenantId, clientId);
    if (!c || c.organizationGrant?.organizationId !== orgId) throw notFound();
    return c;
  }

  /**
   * Binds the client to the organization with `roles` (or changes its roles there). Only a
   * client_credentials client (400), not one bound to another organization (409: that
   * organization unbinds it first), and roles usable in this organization (400).
   */
  /**
   * Binds a client to an organization with roles there, or changes its roles. Only a platform key
   * binds a client (`byOrganizationKey` false): a tenant's clients are not an organization's to
   * take, so an organization's own key changes the roles of a client already bound to it and
   * nothing else (403 forbidden), as a trust boundary (SECURITY-CHECKLIST, org-bound keys).
   */
  async put(tenantId: string, actor: Actor, orgId: string, clientId: string, requested: string[], byOrganizationKey = false) {
    const updated = await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      await this.#requireOrg(r, tenantId, orgId);
      const c = await r.oauthClients.find(tenantId, clientId);
      if (!c) throw errors.notFound('no such client');
      if (!c.grantTypes.includes(GRANT_TYPE.clientCredentials)) throw errors.invalidRequest('only a client_credentials client can be bound to an organization');
      if (c.organizationGrant && c.organizationGrant.organizationId !== orgId) throw errors.conflict('the client is bound to another organization');
      if (byOrganizationKey && !c.organizationGrant)
        throw errors.forbidden("an organization's key may change the roles of a client bound to its organization, not bind one: bind it with a platform key");
      const roles = await resolveRoles(r, tenantId, orgId, requested);
      const previous = c.organizationGrant?.roles ?? null;
      const now = this.deps.clock.now();
      await r.oauthClients.setOrganizationGrant(tenantId, clientId, { organizationId: orgId, roles }, now);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'client.organization_granted',
        organizationId: orgId,
        actor,
        data: { client_id: clientId, organization_id: orgId, roles, previous_roles: previous },
      });
      return { ...c, organizationGrant: { organizationId: orgId, roles }, updatedAt: now };
    });
    this.changed(tenantId, clientId);
    return updated;
  }

  /** Unbinds the client: its next token carries no organization. */
  async delete(tenantId: string, actor: Actor, orgId: string, clientId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      await this.#requireOrg(r, tenantId, orgId);
      const c = await r.oauthClients.find(tenantId, clientId);
      if (!c || c.organizationGrant?.organizationId !== orgId) throw notFound();
      await r.oauthClients.setOrganizationGrant(tenantId, clientId, null, this.deps.clock.now());
      await this.deps.events.record(trx, {
        tenantId,
        type: 'client.organization_revoked',
        organizationId: orgId,
        actor,
        data: { client_id: clientId, organization_id: orgId, roles: c.organizationGrant.roles },
      });
    });
    this.changed(tenantId, clientId);
  }
}
