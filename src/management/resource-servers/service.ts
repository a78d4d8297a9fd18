/**
 * Resource servers (APIs), tenant-wide: the audience a token is for, and how tokens for it are
 * signed (algorithm), how long they live, which scopes it defines and whether DPoP is required.
 * A new algorithm gets the tenant a key for it before the resource server exists.
 */
import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { AccessTokenAlg } from '../../oauth/tokens/jws.js';
import type { ResourceServerRecord } from '../../oauth/types.js';
import { isUniqueViolation } from '../../storage/db.js';
import { changesOf } from '../../kernel/changes.js';
import { type ManagementDeps, iso, reposOf } from '../common.js';

export interface ResourceServerInput {
  name?: string | undefined;
  identifier?: string | undefined;
  access_token_signing_alg?: AccessTokenAlg | undefined;
  access_token_ttl_seconds?: number | null | undefined;
  scopes?: string[] | undefined;
  /** The declared permissions (the scopes, with descriptions); replaces `scopes` when given. */
  permissions?: Array<{ name: string; description?: string | null | undefined }> | undefined;
  dpop_required?: boolean | undefined;
}

/** The scopes and descriptions an input declares (`permissions` or `scopes`, not both), or undefined when neither. */
function declared(input: ResourceServerInput): { scopes: string[]; descriptions: Record<string, string> } | undefined {
  if (input.permissions !== undefined && input.scopes !== undefined) throw errors.invalidRequest('give permissions or scopes, not both');
  if (input.permissions !== undefined) {
    const descriptions: Record<string, string> = {};
    for (const p of input.permissions) if (p.description) descriptions[p.name] = p.description;
    return { scopes: [...new Set(input.permissions.map((p) => p.name))], descriptions };
  }
  if (input.scopes !== undefined) return { scopes: [...new Set(input.scopes)], descriptions: {} };
  return undefined;
}

export interface ResourceServerView {
  id: string;
  name: string;
  identifier: string;
  access_token_signing_alg: AccessTokenAlg;
  access_token_ttl_seconds: number | null;
  scopes: string[];
  permissions: Array<{ name: string; description: string | null }>;
  dpop_required: boolean;
  created_at: string;
  updated_at: string;
}

export function resourceServerView(rs: ResourceServerRecord): ResourceServerView {
  return {
    id: rs.id,
    name: rs.name,
    identifier: rs.identifier,
    access_token_signing_alg: rs.signingAlg,
    access_token_ttl_seconds: rs.accessTokenTtlSeconds,
    scopes: rs.scopes,
    permissions: rs.scopes.map((name) => ({ name, description: rs.permissionDescriptions[name] ?? null })),
    dpop_required: rs.dpopRequired,
    created_at: iso(rs.createdAt),
    updated_at: iso(rs.updatedAt),
  };
}

const notFound = () => errors.notFound('no such resource server');
const taken = (err: unknown) => (isUniqueViolation(err) ? errors.conflict('a resource server with this identifier exists') : err);

export class ResourceServerService {
  constructor(
    private readonly deps: ManagementDeps,
    /** Gives the tenant an active key for the algorithm (src/tenants/service.ts ensureKeys). */
    private readonly ensureKey: (tenantId: string, alg: AccessTokenAlg, actor: Actor) => Promise<void>,
    /** Drops an identifier from this instance's resource-server cache. */
    private readonly changed: (tenantId: string, identifier: string) => void = () => undefined,
  ) {}

  /** The tenant issuer is every token's default audience: it is not a resource server. */
  #checkIdentifier(identifier: string, issuer: string): void {
    if (identifier === issuer || identifier === `${issuer}/`) throw errors.invalidRequest('identifier: must not be the tenant issuer');
  }

  async create(
    tenantId: string,
    issuer: string,
    actor: Actor,
    input: ResourceServerInput & { name: string; identifier: string },
  ): Promise<ResourceServerRecord> {
    this.#checkIdentifier(input.identifier, issuer);
    const now = this.deps.clock.now();
    const declares = declared(input);
    const rs: ResourceServerRecord = {
      id: newId('rs', now),
      tenantId,
      name: input.name,
      identifier: input.identifier,
      signingAlg: input.access_token_signing_alg ?? 'EdDSA',
      accessTokenTtlSeconds: input.access_token_ttl_seconds ?? null,
      scopes: declares?.scopes ?? [],
      dpopRequired: input.dpop_required ?? false,
      permissionDescriptions: declares?.descriptions ?? {},
      createdAt: now,
      updatedAt: now,
    };
    await this.ensureKey(tenantId, rs.signingAlg, actor);
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        await reposOf(this.deps, trx).resourceServers.insert(rs);
        await this.deps.events.record(trx, { tenantId, type: 'resource_server.created', organizationId: null, actor, data: this.#eventData(rs) });
      });
    } catch (err) {
      throw taken(err);
    }
    this.changed(tenantId, rs.identifier);
    return rs;
  }

  async get(tenantId: string, id: string): Promise<ResourceServerRecord> {
    const rs = await reposOf(this.deps).resourceServers.find(tenantId, id);
    if (!rs) throw notFound();
    return rs;
  }

  list(tenantId: string, opts: { after?: string | undefined; limit: number }): Promise<ResourceServerRecord[]> {
    return reposOf(this.deps).resourceServers.list(tenantId, opts);
  }

  async update(tenantId: string, issuer: string, actor: Actor, id: string, input: ResourceServerInput): Promise<ResourceServerRecord> {
    const current = await this.get(tenantId, id);
    const declares = declared(input);
    const next: ResourceServerRecord = {
      ...current,
      name: input.name ?? current.name,
      identifier: input.identifier ?? current.identifier,
      signingAlg: input.access_token_signing_alg ?? current.signingAlg,
      accessTokenTtlSeconds: input.access_token_ttl_seconds === undefined ? current.accessTokenTtlSeconds : input.access_token_ttl_seconds,
      scopes: declares?.scopes ?? current.scopes,
      // New scopes keep the descriptions they had; `permissions` replaces them all.
      permissionDescriptions: declares
        ? input.permissions
          ? declares.descriptions
          : Object.fromEntries(Object.entries(current.permissionDescriptions).filter(([k]) => declares.scopes.includes(k)))
        : current.permissionDescriptions,
      dpopRequired: input.dpop_required ?? current.dpopRequired,
      updatedAt: this.deps.clock.now(),
    };
    // Nothing changes: no write, no updated_at bump, no event.
    if (Object.keys(changesOf(current, { ...next, updatedAt: undefined })).length === 0) return current;
    this.#checkIdentifier(next.identifier, issuer);
    if (next.signingAlg !== current.signingAlg) await this.ensureKey(tenantId, next.signingAlg, actor);
    try {
      await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        if (!(await reposOf(this.deps, trx).resourceServers.update(next))) throw notFound();
        await this.deps.events.record(trx, { tenantId, type: 'resource_server.updated', organizationId: null, actor, data: this.#eventData(next) });
      });
    } catch (err) {
      throw taken(err);
    }
    this.changed(tenantId, current.identifier);
    this.changed(tenantId, next.identifier);
    return next;
  }

  async delete(tenantId: string, actor: Actor, id: string): Promise<void> {
    const current = await this.get(tenantId, id);
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      if (!(await reposOf(this.deps, trx).resourceServers.delete(tenantId, id))) throw notFound();
      await this.deps.events.record(trx, {
        tenantId,
        type: 'resource_server.deleted',
        organizationId: null,
        actor,
        data: { id, identifier: current.identifier },
      });
    });
    this.changed(tenantId, current.identifier);
  }

  #eventData(rs: ResourceServerRecord): Record<string, unknown> {
    return { id: rs.id, identifier: rs.identifier, access_token_signing_alg: rs.signingAlg, scopes: rs.scopes, dpop_required: rs.dpopRequired };
  }
}
