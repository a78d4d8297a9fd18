import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { isUniqueViolation } from '../../storage/db.js';
import type { OrganizationPatch, OrganizationRecord } from '../../storage/repos/organizations.js';
import { changesOf, iso, type ManagementDeps, reposOf } from '../common.js';

export function organizationView(o: OrganizationRecord) {
  return {
    id: o.id,
    name: o.name,
    slug: o.slug,
    domain: o.domain,
    did: o.did,
    status: o.status,
    brand_logo_url: o.brandLogoUrl,
    brand_primary_color: o.brandPrimaryColor,
    brand_display_name: o.brandDisplayName,
    webauthn_aaguid_allowlist: o.webauthnAaguidAllowlist,
    created_at: iso(o.createdAt),
    updated_at: iso(o.updatedAt),
  };
}

/** The API spelling of a record field. */
const apiName = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const slugTaken = (err: unknown) => {
  if (isUniqueViolation(err)) return errors.conflict('slug: another organization already uses this slug');
  return err;
};

export class OrganizationService {
  constructor(private readonly deps: ManagementDeps) {}

  async create(tenantId: string, actor: Actor, input: { name: string; slug?: string; domain?: string }) {
    const now = this.deps.clock.now();
    const org: OrganizationRecord = {
      id: newId('org', now),
      tenantId,
      name: input.name,
      slug: input.slug ?? null,
      domain: input.domain ?? null,
      did: null,
      status: 'active',
      brandLogoUrl: null,
      brandPrimaryColor: null,
      brandDisplayName: null,
      webauthnAaguidAllowlist: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        await reposOf(this.deps, trx).organizations.insert(org);
        await this.deps.events.record(trx, {
          tenantId,
          type: 'organization.created',
          organizationId: org.id,
          actor,
          data: { organization_id: org.id, name: org.name },
        });
      });
    } catch (err) {
      throw slugTaken(err);
    }
    return org;
  }

  async get(tenantId: string, id: string): Promise<OrganizationRecord> {
    const org = await reposOf(this.deps).organizations.find(tenantId, id);
    if (!org) throw errors.notFound('organization not found');
    return org;
  }

  list(tenantId: string, after: string | undefined, limit: number) {
    return reposOf(this.deps).organizations.list(tenantId, after, limit);
  }

  async update(tenantId: string, actor: Actor, id: string, patch: OrganizationPatch) {
    try {
      return await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const repo = reposOf(this.deps, trx).organizations;
        const current = await repo.find(tenantId, id);
        if (!current) throw errors.notFound('organization not found');
        const changes = changesOf(current, patch);
        // Nothing changes: no write, no updated_at bump, no event.
        if (Object.keys(changes).length === 0) return current;
        const org = await repo.update(tenantId, id, changes, this.deps.clock.now());
        if (!org) throw errors.notFound('organization not found');
        await this.deps.events.record(trx, {
          tenantId,
          type: 'organization.updated',
          organizationId: id,
          actor,
          data: { organization_id: id, fields: Object.keys(changes).map(apiName) },
        });
        return org;
      });
    } catch (err) {
      throw slugTaken(err);
    }
  }

  /** Deletes the organization, its memberships (each a member.removed event) and revokes its API keys. */
  async delete(tenantId: string, actor: Actor, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const now = this.deps.clock.now();
      const r = reposOf(this.deps, trx);
      const members = await r.members.listByOrganization(tenantId, id);
      if (!(await r.organizations.delete(tenantId, id))) throw errors.notFound('organization not found');
      await r.apiKeys.revokeAllOfOrganization(tenantId, id, now);
      for (const m of members) {
        await this.deps.events.record(trx, {
          tenantId,
          type: 'member.removed',
          organizationId: id,
          actor,
          data: { organization_id: id, user_id: m.userId, role: m.role },
        });
      }
      await this.deps.events.record(trx, { tenantId, type: 'organization.deleted', organizationId: id, actor, data: { organization_id: id } });
    });
  }
}
