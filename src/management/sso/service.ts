/**
 * SSO connections of an organization (docs/sso.md): an OIDC issuer is discovered through the
 * egress policy when the connection is created (and again when its issuer changes); the client
 * secret is stored under envelope encryption and never returned.
 */
import type { Actor } from '../../events/catalogue.js';
import type { Envelope } from '../../kernel/crypto/envelope.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { chooseIdTokenAlg, chooseTokenAuthMethod, discoverIssuer, type UpstreamHttp } from '../../sso/oidc.js';
import { sealConnectionSecret } from '../../sso/secrets.js';
import type { OidcSettings, SsoConnectionPatch, SsoConnectionRecord } from '../../storage/repos/sso-connections.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';
import type { Role } from '../members/service.js';

export interface SsoDeps extends ManagementDeps {
  envelope: Envelope;
  upstream: UpstreamHttp;
}

/** Connections per organization. */
export const MAX_CONNECTIONS_PER_ORGANIZATION = 20;

export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
export const DEFAULT_CLAIMS = { email: 'email', name: 'name', groups: 'groups' };

export interface OidcInput {
  issuer?: string;
  client_id?: string;
  client_secret?: string | null;
  scopes?: string[];
  pkce?: boolean;
  claims?: { email?: string; name?: string; groups?: string };
}

export interface ConnectionInput {
  name?: string;
  enabled?: boolean;
  default_role?: Role;
  group_roles?: Record<string, Role>;
  oidc?: OidcInput;
}

/** The public view: never the client secret, only whether there is one. */
export function ssoConnectionView(c: SsoConnectionRecord, issuer: string) {
  return {
    id: c.id,
    organization_id: c.organizationId,
    protocol: c.protocol,
    name: c.name,
    enabled: c.enabled,
    default_role: c.defaultRole,
    group_roles: c.groupRoles,
    oidc: {
      issuer: c.config.issuer,
      client_id: c.config.clientId,
      has_client_secret: c.secretEnc !== null,
      scopes: c.config.scopes,
      pkce: c.config.pkce,
      claims: c.config.claims,
      id_token_signed_response_alg: c.config.idTokenAlg,
      token_endpoint_auth_method: c.config.tokenAuthMethod,
      redirect_uri: `${issuer}/sso/oidc/${c.id}/callback`,
    },
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

const lowerKeys = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k.trim().toLowerCase(), v]));

/** Names (API spelling) of what a patch changes. */
function changedFields(input: ConnectionInput): string[] {
  const top = (['name', 'enabled', 'default_role', 'group_roles'] as const).filter((k) => input[k] !== undefined);
  const oidc = Object.entries(input.oidc ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k]) => `oidc.${k}`);
  return [...top, ...oidc];
}

export class SsoConnectionService {
  constructor(private readonly deps: SsoDeps) {}

  /** The OIDC settings after `input`, discovering the issuer when it is new or changed. */
  async #settings(current: OidcSettings | undefined, input: OidcInput, hasSecret: boolean): Promise<OidcSettings> {
    const issuer = input.issuer ?? current?.issuer;
    const clientId = input.client_id ?? current?.clientId;
    if (issuer === undefined) throw errors.invalidRequest('oidc.issuer: required');
    if (clientId === undefined) throw errors.invalidRequest('oidc.client_id: required');
    const scopes = input.scopes ?? current?.scopes ?? DEFAULT_SCOPES;
    if (!scopes.includes('openid')) throw errors.invalidRequest('oidc.scopes: must include openid');
    const pkce = input.pkce ?? current?.pkce ?? true;
    if (!pkce && !hasSecret) throw errors.invalidRequest('oidc.pkce: a connection without a client secret must use PKCE');
    const metadata = current && input.issuer === undefined ? current.metadata : await discoverIssuer(issuer, this.deps.upstream);
    const idTokenAlg = chooseIdTokenAlg(metadata);
    if (!idTokenAlg) throw errors.invalidRequest('oidc.issuer: the provider advertises no asymmetric ID-token signing algorithm');
    const tokenAuthMethod = chooseTokenAuthMethod(metadata, hasSecret);
    if (!tokenAuthMethod) throw errors.invalidRequest('oidc.client_secret: the provider supports neither client_secret_basic nor client_secret_post');
    if (pkce && Array.isArray(metadata.code_challenge_methods_supported) && !metadata.code_challenge_methods_supported.includes('S256')) {
      throw errors.invalidRequest('oidc.pkce: the provider does not support S256 PKCE');
    }
    return {
      issuer: metadata.issuer,
      clientId,
      scopes: [...new Set(scopes)],
      pkce,
      claims: { ...DEFAULT_CLAIMS, ...current?.claims, ...input.claims },
      idTokenAlg,
      tokenAuthMethod,
      metadata,
    };
  }

  async create(tenantId: string, actor: Actor, orgId: string, input: ConnectionInput & { name: string; oidc: OidcInput }) {
    const now = this.deps.clock.now();
    const id = newId('sso', now);
    const secret = input.oidc.client_secret ?? null;
    const config = await this.#settings(undefined, input.oidc, secret !== null);
    const c: SsoConnectionRecord = {
      id,
      tenantId,
      organizationId: orgId,
      protocol: 'oidc',
      name: input.name,
      enabled: input.enabled ?? true,
      defaultRole: input.default_role ?? 'member',
      groupRoles: lowerKeys(input.group_roles ?? {}),
      config,
      secretEnc: secret === null ? null : sealConnectionSecret(this.deps.envelope, tenantId, id, secret),
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.organizations.findShared(tenantId, orgId, this.deps.db.dialect))) throw errors.notFound('organization not found');
      if ((await r.ssoConnections.listByOrganization(tenantId, orgId)).length >= MAX_CONNECTIONS_PER_ORGANIZATION) {
        throw errors.invalidRequest(`an organization can have at most ${MAX_CONNECTIONS_PER_ORGANIZATION} SSO connections`);
      }
      await r.ssoConnections.insert(c);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'sso.connection.created',
        organizationId: orgId,
        actor,
        data: { connection_id: id, protocol: c.protocol, issuer: config.issuer, enabled: c.enabled },
      });
    });
    return c;
  }

  async get(tenantId: string, orgId: string, id: string): Promise<SsoConnectionRecord> {
    const c = await reposOf(this.deps).ssoConnections.find(tenantId, orgId, id);
    if (!c) throw errors.notFound('SSO connection not found');
    return c;
  }

  async list(tenantId: string, orgId: string): Promise<SsoConnectionRecord[]> {
    if (!(await reposOf(this.deps).organizations.find(tenantId, orgId))) throw errors.notFound('organization not found');
    return reposOf(this.deps).ssoConnections.listByOrganization(tenantId, orgId);
  }

  async update(tenantId: string, actor: Actor, orgId: string, id: string, input: ConnectionInput) {
    const current = await this.get(tenantId, orgId, id);
    const patch: SsoConnectionPatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    if (input.default_role !== undefined) patch.defaultRole = input.default_role;
    if (input.group_roles !== undefined) patch.groupRoles = lowerKeys(input.group_roles);
    if (input.oidc !== undefined) {
      const secret = input.oidc.client_secret;
      if (secret !== undefined) patch.secretEnc = secret === null ? null : sealConnectionSecret(this.deps.envelope, tenantId, id, secret);
      const hasSecret = secret === undefined ? current.secretEnc !== null : secret !== null;
      patch.config = await this.#settings(current.config, input.oidc, hasSecret);
    }
    const fields = changedFields(input);
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const updated = await reposOf(this.deps, trx).ssoConnections.update(tenantId, orgId, id, patch, this.deps.clock.now());
      if (!updated) throw errors.notFound('SSO connection not found');
      await this.deps.events.record(trx, { tenantId, type: 'sso.connection.updated', organizationId: orgId, actor, data: { connection_id: id, fields } });
      return updated;
    });
  }

  async delete(tenantId: string, actor: Actor, orgId: string, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      if (!(await reposOf(this.deps, trx).ssoConnections.delete(tenantId, orgId, id))) throw errors.notFound('SSO connection not found');
      await this.deps.events.record(trx, { tenantId, type: 'sso.connection.deleted', organizationId: orgId, actor, data: { connection_id: id } });
    });
  }
}
