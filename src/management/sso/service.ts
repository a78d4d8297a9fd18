/**
 * SSO connections of an organization (docs/sso.md): an OIDC issuer is discovered through the
 * egress policy when the connection is created (and again when its issuer changes); the client
 * secret is stored under envelope encryption and never returned. A SAML connection imports the
 * IdP's metadata (XML, or a URL fetched through the egress policy).
 */
import { X509Certificate } from 'node:crypto';
import type { Actor } from '../../events/catalogue.js';
import type { Envelope } from '../../kernel/crypto/envelope.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { chooseIdTokenAlg, chooseTokenAuthMethod, discoverIssuer } from '../../sso/oidc.js';
import type { UpstreamClient } from '../../upstream/client.js';
import { fetchIdpMetadata, type IdpMetadata, parseIdpMetadata } from '../../sso/saml.js';
import { sealConnectionSecret } from '../../sso/secrets.js';
import {
  type OidcSettings,
  oidcSettings,
  type SamlSettings,
  type SsoConnectionPatch,
  type SsoConnectionRecord,
  samlSettings,
} from '../../storage/repos/sso-connections.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';
import { checkMappedRoles } from '../roles/service.js';

export interface SsoDeps extends ManagementDeps {
  envelope: Envelope;
  upstream: UpstreamClient;
}

/** Connections per organization. */
export const MAX_CONNECTIONS_PER_ORGANIZATION = 20;

export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
export const DEFAULT_CLAIMS = { email: 'email', name: 'name', groups: 'groups' };
export const DEFAULT_SAML_ATTRIBUTES = { email: 'email', name: 'name', groups: 'groups' };

export interface OidcInput {
  issuer?: string;
  client_id?: string;
  client_secret?: string | null;
  scopes?: string[];
  pkce?: boolean;
  claims?: { email?: string; name?: string; groups?: string };
}

export interface SamlInput {
  metadata_xml?: string;
  metadata_url?: string;
  sp_entity_id?: string | null;
  allow_signed_response?: boolean;
  attributes?: { email?: string; name?: string; groups?: string; email_verified?: string | null };
}

export interface ConnectionInput {
  name?: string;
  enabled?: boolean;
  default_role?: string;
  group_roles?: Record<string, string>;
  trust_idp_mfa?: boolean;
  oidc?: OidcInput;
  saml?: SamlInput;
}

export type CreateConnectionInput = ConnectionInput & { name: string } & ({ protocol: 'oidc'; oidc: OidcInput } | { protocol: 'saml'; saml: SamlInput });

function oidcView(c: SsoConnectionRecord, issuer: string) {
  const config = oidcSettings(c);
  return {
    issuer: config.issuer,
    client_id: config.clientId,
    has_client_secret: c.secretEnc !== null,
    scopes: config.scopes,
    pkce: config.pkce,
    claims: config.claims,
    id_token_signed_response_alg: config.idTokenAlg,
    token_endpoint_auth_method: config.tokenAuthMethod,
    redirect_uri: `${issuer}/sso/oidc/${c.id}/callback`,
  };
}

function samlView(c: SsoConnectionRecord, issuer: string) {
  const config = samlSettings(c);
  const metadataUrl = `${issuer}/sso/saml/${c.id}/metadata`;
  return {
    idp_entity_id: config.idpEntityId,
    idp_sso_url: config.idpSsoUrl,
    idp_certificates: config.idpCertificates.map((der) => {
      const cert = new X509Certificate(Buffer.from(der, 'base64'));
      return { fingerprint_sha256: cert.fingerprint256, not_after: new Date(cert.validTo).toISOString() };
    }),
    metadata_url: config.metadataUrl,
    sp_entity_id: config.spEntityId ?? metadataUrl,
    acs_url: `${issuer}/sso/saml/${c.id}/acs`,
    sp_metadata_url: metadataUrl,
    allow_signed_response: config.allowSignedResponse,
    attributes: {
      email: config.attributes.email,
      name: config.attributes.name,
      groups: config.attributes.groups,
      email_verified: config.attributes.emailVerified ?? null,
    },
  };
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
    trust_idp_mfa: c.trustIdpMfa,
    ...(c.protocol === 'saml' ? { saml: samlView(c, issuer) } : { oidc: oidcView(c, issuer) }),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

/** The attribute names after `input`; `email_verified: null` removes that attribute (the verified-domain rule applies again). */
function samlAttributes(current: SamlSettings['attributes'] | undefined, input: SamlInput['attributes']): SamlSettings['attributes'] {
  const { email_verified: verified, ...names } = input ?? {};
  const merged: SamlSettings['attributes'] = { ...DEFAULT_SAML_ATTRIBUTES, ...current, ...names };
  if (verified === null) delete merged.emailVerified;
  else if (verified !== undefined) merged.emailVerified = verified;
  return merged;
}

const lowerKeys = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k.trim().toLowerCase(), v]));

/** Names (API spelling) of what a patch changes. */
function changedFields(input: ConnectionInput): string[] {
  const top = (['name', 'enabled', 'default_role', 'group_roles', 'trust_idp_mfa'] as const).filter((k) => input[k] !== undefined);
  const nested = (['oidc', 'saml'] as const).flatMap((p) =>
    Object.entries(input[p] ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([k]) => `${p}.${k}`),
  );
  return [...top, ...nested];
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

  /** The SAML settings after `input`: metadata imported again when given (XML or URL, not both). */
  async #samlSettings(current: SamlSettings | undefined, input: SamlInput): Promise<SamlSettings> {
    if (input.metadata_xml !== undefined && input.metadata_url !== undefined) throw errors.invalidRequest('saml: give metadata_xml or metadata_url, not both');
    let idp: IdpMetadata | undefined;
    let metadataUrl = current?.metadataUrl ?? null;
    if (input.metadata_xml !== undefined) {
      idp = await parseIdpMetadata(input.metadata_xml, 'saml.metadata_xml');
      metadataUrl = null;
    } else if (input.metadata_url !== undefined) {
      idp = await fetchIdpMetadata(input.metadata_url, this.deps.upstream.http, 'saml.metadata_url');
      metadataUrl = input.metadata_url;
    }
    if (!idp && !current) throw errors.invalidRequest('saml: metadata_xml or metadata_url is required');
    return {
      idpEntityId: idp?.entityId ?? current!.idpEntityId,
      idpSsoUrl: idp?.ssoUrl ?? current!.idpSsoUrl,
      idpCertificates: idp?.certificates ?? current!.idpCertificates,
      metadataUrl,
      spEntityId: input.sp_entity_id === undefined ? (current?.spEntityId ?? null) : input.sp_entity_id,
      allowSignedResponse: input.allow_signed_response ?? current?.allowSignedResponse ?? false,
      attributes: samlAttributes(current?.attributes, input.attributes),
    };
  }

  async create(tenantId: string, actor: Actor, orgId: string, input: CreateConnectionInput) {
    const now = this.deps.clock.now();
    const id = newId('sso', now);
    const secret = input.protocol === 'oidc' ? (input.oidc.client_secret ?? null) : null;
    const config = input.protocol === 'oidc' ? await this.#settings(undefined, input.oidc, secret !== null) : await this.#samlSettings(undefined, input.saml);
    const c: SsoConnectionRecord = {
      id,
      tenantId,
      organizationId: orgId,
      protocol: input.protocol,
      name: input.name,
      enabled: input.enabled ?? true,
      defaultRole: input.default_role ?? 'member',
      groupRoles: lowerKeys(input.group_roles ?? {}),
      config,
      secretEnc: secret === null ? null : sealConnectionSecret(this.deps.envelope, tenantId, id, secret),
      trustIdpMfa: input.trust_idp_mfa ?? false,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.organizations.findShared(tenantId, orgId, this.deps.db.dialect))) throw errors.notFound('organization not found');
      await checkMappedRoles(r, tenantId, orgId, 'default_role', c.defaultRole);
      await checkMappedRoles(r, tenantId, orgId, 'group_roles', c.groupRoles);
      if ((await r.ssoConnections.listByOrganization(tenantId, orgId)).length >= MAX_CONNECTIONS_PER_ORGANIZATION) {
        throw errors.invalidRequest(`an organization can have at most ${MAX_CONNECTIONS_PER_ORGANIZATION} SSO connections`);
      }
      await r.ssoConnections.insert(c);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'sso.connection.created',
        organizationId: orgId,
        actor,
        data: { connection_id: id, protocol: c.protocol, issuer: 'issuer' in config ? config.issuer : config.idpEntityId, enabled: c.enabled },
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
    if (input.trust_idp_mfa !== undefined) patch.trustIdpMfa = input.trust_idp_mfa;
    if (input.oidc !== undefined && current.protocol !== 'oidc') throw errors.invalidRequest('oidc: this is a SAML connection');
    if (input.saml !== undefined && current.protocol !== 'saml') throw errors.invalidRequest('saml: this is an OIDC connection');
    if (input.saml !== undefined) patch.config = await this.#samlSettings(samlSettings(current), input.saml);
    if (input.oidc !== undefined) {
      const secret = input.oidc.client_secret;
      if (secret !== undefined) patch.secretEnc = secret === null ? null : sealConnectionSecret(this.deps.envelope, tenantId, id, secret);
      const hasSecret = secret === undefined ? current.secretEnc !== null : secret !== null;
      patch.config = await this.#settings(oidcSettings(current), input.oidc, hasSecret);
    }
    const fields = changedFields(input);
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      await checkMappedRoles(reposOf(this.deps, trx), tenantId, orgId, 'default_role', patch.defaultRole);
      await checkMappedRoles(reposOf(this.deps, trx), tenantId, orgId, 'group_roles', patch.groupRoles);
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
