import type { MembershipVault } from '../../connect/vault.js';
import type { Actor } from '../../events/catalogue.js';
import { revokeMembershipCredentials } from '../../credentials/service.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { TxtResolver } from '../../egress/dns.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { isUniqueViolation } from '../../storage/db.js';
import { holdsEveryPermission } from '../permissions.js';
import type { OrganizationPatch, OrganizationRecord } from '../../storage/repos/organizations.js';
import { changesOf } from '../../kernel/changes.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

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
    domain_verified: o.domain !== null && o.domainVerifiedAt !== null,
    sso_required: o.ssoRequired,
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

/** The DNS name and TXT value that prove control of an organization's domain (docs/sso.md). */
export function domainChallenge(tenantId: string, orgId: string, domain: string) {
  return {
    name: `_keyhall-challenge.${domain}`,
    type: 'TXT' as const,
    value: `keyhall-domain-verification=${sha256Hex(`${tenantId}:${orgId}:${domain}`).slice(0, 32)}`,
  };
}

export function domainVerificationView(o: OrganizationRecord) {
  return {
    domain: o.domain,
    verified: o.domain !== null && o.domainVerifiedAt !== null,
    verified_at: o.domainVerifiedAt === null ? null : iso(o.domainVerifiedAt),
    dns: o.domain === null ? null : domainChallenge(o.tenantId, o.id, o.domain),
  };
}

export class OrganizationService {
  constructor(
    private readonly deps: ManagementDeps & { vault: MembershipVault },
    private readonly txt: TxtResolver,
  ) {}

  /**
   * Marks the organization's domain verified: by its DNS TXT record (`method: dns`, any key of
   * the organization), or by the word (`manual`) of an actor holding `domains:verify` — a platform
   * key holding every permission, or a console administrator. A verified domain makes the
   * organization's IdP authoritative for its emails (docs/sso.md, "Trust boundaries"). A domain
   * another organization of the tenant has verified is a conflict: a domain routes to one
   * organization.
   */
  async verifyDomain(
    tenantId: string,
    actor: Actor,
    id: string,
    method: 'dns' | 'manual',
    caller: { organizationId: string | null; scopes: ReadonlySet<string> },
  ) {
    if (method === 'manual') {
      if (caller.organizationId !== null)
        throw errors.forbidden('manual domain verification needs a platform API key holding every permission; use method "dns"');
      if (!caller.scopes.has('domains:verify') || !holdsEveryPermission(caller)) {
        throw errors.insufficientScope(
          'manual domain verification needs the domains:verify permission (platform keys holding every permission, console administrators); use method "dns"',
        );
      }
    }
    const org = await this.get(tenantId, id);
    if (org.domain === null) throw errors.invalidRequest('domain: the organization has no domain; set one first');
    if (org.domainVerifiedAt !== null) return org;
    const domain = org.domain;
    if (method === 'dns') {
      const challenge = domainChallenge(tenantId, id, domain);
      const records = await this.txt(challenge.name);
      if (!records.includes(challenge.value))
        throw errors.invalidRequest(`domain: no TXT record ${challenge.name} with the value ${challenge.value} was found`);
    }
    try {
      return await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const r = reposOf(this.deps, trx);
        const owner = await r.organizations.findByVerifiedDomain(tenantId, domain);
        if (owner && owner.id !== id) throw errors.conflict('domain: another organization has verified this domain');
        const current = await r.organizations.find(tenantId, id);
        if (!current || current.domain !== domain) throw errors.conflict('domain: the domain changed during verification; retry');
        const updated = (await r.organizations.update(tenantId, id, { domainVerifiedAt: this.deps.clock.now() }, this.deps.clock.now()))!;
        await this.deps.events.record(trx, {
          tenantId,
          type: 'organization.domain_verified',
          organizationId: id,
          actor,
          data: { organization_id: id, domain, method },
        });
        return updated;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.conflict('domain: another organization has verified this domain');
      throw err;
    }
  }

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
      domainVerifiedAt: null,
      ssoRequired: false,
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
        const r = reposOf(this.deps, trx);
        const current = await r.organizations.find(tenantId, id);
        if (!current) throw errors.notFound('organization not found');
        const changes = changesOf(current, patch);
        // Nothing changes: no write, no updated_at bump, no event.
        if (Object.keys(changes).length === 0) return current;
        // A new domain must be verified again before it routes sign-ins.
        const reset = changes.domain !== undefined ? { domainVerifiedAt: null } : {};
        const org = await r.organizations.update(tenantId, id, { ...changes, ...reset }, this.deps.clock.now());
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

  /**
   * Deletes the organization, its memberships (each a member.removed event, its members' connected
   * accounts disconnected and revoked upstream as when a member is removed) and revokes its API keys.
   */
  async delete(tenantId: string, actor: Actor, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const now = this.deps.clock.now();
      const r = reposOf(this.deps, trx);
      const members = await r.members.listByOrganization(tenantId, id);
      // Before the rows cascade away: each member's connected accounts, with their events and revocation.
      for (const m of members) await this.deps.vault.endMembership(trx, { tenantId, organizationId: id, userId: m.userId }, actor);
      if (!(await r.organizations.delete(tenantId, id))) throw errors.notFound('organization not found');
      await r.apiKeys.revokeAllOfOrganization(tenantId, id, now);
      await r.mfa.deletePolicy(tenantId, id);
      for (const m of members) {
        await revokeMembershipCredentials(
          trx,
          { dialect: this.deps.db.dialect, events: this.deps.events, now },
          { tenantId, organizationId: id, userId: m.userId },
          actor,
        );
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
