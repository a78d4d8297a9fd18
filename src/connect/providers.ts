/**
 * Upstream providers of the connected-accounts vault (tenant-wide): generic OAuth 2.0 or
 * OpenID Connect (endpoints discovered from the issuer), optionally from a preset. Every
 * upstream URL passes the egress policy here, at registration, and again at every request
 * (UpstreamClient). The client secret is stored under envelope encryption and never returned.
 */
import type { Actor } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { EgressPolicy, EgressResolver } from '../egress/policy.js';
import { assertEgressUrl } from '../egress/url.js';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { errors } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { Db } from '../storage/db.js';
import type { ConnectProviderRecord, ProviderKind, UpstreamAuthMethod } from '../storage/repos/connect.js';
import { repos } from '../storage/repos/index.js';
import { type PresetName, PRESETS } from '../upstream/presets.js';
import { FieldPathError, parseFieldPath } from '../upstream/profile.js';
import { sealClientSecret } from './secrets.js';
import { type UpstreamClient, UpstreamError } from '../upstream/client.js';

/** Parameters Keyhall sets itself on every authorization request. */
export const RESERVED_AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'];

export interface ProviderInput {
  name?: string;
  preset?: PresetName;
  type?: ProviderKind;
  issuer?: string | null;
  authorization_endpoint?: string;
  token_endpoint?: string;
  revocation_endpoint?: string | null;
  client_id?: string;
  client_secret?: string | null;
  token_endpoint_auth_method?: UpstreamAuthMethod;
  scopes?: string[];
  pkce?: boolean;
  authorize_params?: Record<string, string>;
  userinfo_endpoint?: string | null;
  subject_field?: string | null;
}

export interface ProviderDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  envelope: Envelope;
  egressPolicy: EgressPolicy;
  resolver?: EgressResolver;
  upstream: UpstreamClient;
}

/** The redirect URI to register at the upstream for this provider. */
export const callbackUri = (issuer: string, providerId: string) => `${issuer}/connect/${providerId}/callback`;

export function providerView(p: ConnectProviderRecord, issuer: string) {
  return {
    provider_id: p.id,
    name: p.name,
    preset: p.preset,
    type: p.kind,
    issuer: p.issuer,
    authorization_endpoint: p.authorizationEndpoint,
    token_endpoint: p.tokenEndpoint,
    revocation_endpoint: p.revocationEndpoint,
    client_id: p.clientId,
    has_client_secret: p.clientSecretEnc !== null,
    token_endpoint_auth_method: p.tokenEndpointAuthMethod,
    scopes: p.scopes,
    pkce: p.pkce,
    authorize_params: p.authorizeParams,
    userinfo_endpoint: p.userinfoEndpoint,
    subject_field: p.subjectField,
    redirect_uri: callbackUri(issuer, p.id),
    created_at: new Date(p.createdAt).toISOString(),
    updated_at: new Date(p.updatedAt).toISOString(),
  };
}

export class ProviderService {
  constructor(private readonly deps: ProviderDeps) {}

  #check(url: string, field: string): Promise<string> {
    return assertEgressUrl(url, this.deps.egressPolicy, { field, resolver: this.deps.resolver });
  }

  /** Endpoints of an OpenID Connect provider, discovered from its (egress-checked) issuer. */
  async #discover(issuer: string) {
    const checked = (await this.#check(issuer, 'issuer')).replace(/\/$/, '');
    try {
      const d = await this.deps.upstream.discover(checked);
      return {
        issuer: d.issuer,
        authorizationEndpoint: await this.#check(d.authorizationEndpoint, 'authorization_endpoint (discovered)'),
        tokenEndpoint: await this.#check(d.tokenEndpoint, 'token_endpoint (discovered)'),
        revocationEndpoint: d.revocationEndpoint ? await this.#check(d.revocationEndpoint, 'revocation_endpoint (discovered)') : null,
        issParameterSupported: d.issParameterSupported,
      };
    } catch (err) {
      if (err instanceof UpstreamError) throw errors.invalidRequest(`issuer: OpenID Connect discovery failed (${err.message})`).because(err);
      throw err;
    }
  }

  /** Applies `input` over `base` (a preset's values or the stored provider) and checks the whole. */
  async #resolve(
    base: Omit<ConnectProviderRecord, 'id' | 'tenantId' | 'createdAt' | 'updatedAt' | 'clientSecretEnc'> & { hasSecret: boolean },
    input: ProviderInput,
    rediscover: boolean,
  ) {
    const next = { ...base };
    if (input.name !== undefined) next.name = input.name;
    if (input.type !== undefined) next.kind = input.type;
    if (input.client_id !== undefined) next.clientId = input.client_id;
    if (input.token_endpoint_auth_method !== undefined) next.tokenEndpointAuthMethod = input.token_endpoint_auth_method;
    if (input.scopes !== undefined) next.scopes = [...new Set(input.scopes)];
    if (input.pkce !== undefined) next.pkce = input.pkce;
    if (input.authorize_params !== undefined) next.authorizeParams = input.authorize_params;
    const reserved = Object.keys(next.authorizeParams).filter((k) => RESERVED_AUTHORIZE_PARAMS.includes(k));
    if (reserved.length) throw errors.invalidRequest(`authorize_params: ${reserved.join(', ')} are set by Keyhall`);
    if (!next.name) throw errors.invalidRequest('name is required');
    if (!next.clientId) throw errors.invalidRequest('client_id is required');

    const secretGiven = input.client_secret !== undefined && input.client_secret !== null;
    const hasSecret = input.client_secret === undefined ? next.hasSecret : secretGiven;
    if (next.tokenEndpointAuthMethod === 'none' && hasSecret) throw errors.invalidRequest('client_secret: not used with token_endpoint_auth_method none');
    if (next.tokenEndpointAuthMethod !== 'none' && !hasSecret)
      throw errors.invalidRequest(`client_secret is required with token_endpoint_auth_method ${next.tokenEndpointAuthMethod}`);

    if (next.kind === 'oidc') {
      for (const f of ['authorization_endpoint', 'token_endpoint', 'revocation_endpoint'] as const) {
        if (input[f] !== undefined) throw errors.invalidRequest(`${f}: an oidc provider's endpoints are discovered from its issuer`);
      }
      const issuer = input.issuer === undefined ? next.issuer : input.issuer;
      if (!issuer) throw errors.invalidRequest('issuer is required for an oidc provider');
      if (rediscover || input.issuer !== undefined || input.type !== undefined) Object.assign(next, await this.#discover(issuer));
    } else {
      if (input.authorization_endpoint !== undefined) next.authorizationEndpoint = input.authorization_endpoint;
      if (input.token_endpoint !== undefined) next.tokenEndpoint = input.token_endpoint;
      if (input.revocation_endpoint !== undefined) next.revocationEndpoint = input.revocation_endpoint;
      if (input.issuer !== undefined) next.issuer = input.issuer;
      if (!next.authorizationEndpoint) throw errors.invalidRequest('authorization_endpoint is required for an oauth2 provider');
      if (!next.tokenEndpoint) throw errors.invalidRequest('token_endpoint is required for an oauth2 provider');
      next.authorizationEndpoint = await this.#check(next.authorizationEndpoint, 'authorization_endpoint');
      next.tokenEndpoint = await this.#check(next.tokenEndpoint, 'token_endpoint');
      if (next.revocationEndpoint) next.revocationEndpoint = await this.#check(next.revocationEndpoint, 'revocation_endpoint');
      if (next.issuer) next.issuer = (await this.#check(next.issuer, 'issuer')).replace(/\/$/, '');
      if (input.issuer !== undefined || input.type !== undefined) next.issParameterSupported = false;
    }
    this.#subjectSource(next, input);
    if (next.userinfoEndpoint) next.userinfoEndpoint = await this.#check(next.userinfoEndpoint, 'userinfo_endpoint');
    return { next, secret: secretGiven ? (input.client_secret as string) : input.client_secret === null ? null : undefined };
  }

  /**
   * Where a generic OAuth 2.0 provider names the person: its userinfo endpoint and the field path
   * of the subject there, both or neither. An OpenID provider names them in its ID token.
   */
  #subjectSource(next: { kind: ProviderKind; userinfoEndpoint: string | null; subjectField: string | null }, input: ProviderInput): void {
    if (next.kind === 'oidc') {
      if (input.userinfo_endpoint || input.subject_field)
        throw errors.invalidRequest("userinfo_endpoint, subject_field: an oidc provider's ID token names the subject");
      next.userinfoEndpoint = null;
      next.subjectField = null;
      return;
    }
    if (input.userinfo_endpoint !== undefined) next.userinfoEndpoint = input.userinfo_endpoint;
    if (input.subject_field !== undefined) next.subjectField = input.subject_field;
    if ((next.userinfoEndpoint === null) !== (next.subjectField === null)) throw errors.invalidRequest('userinfo_endpoint and subject_field go together');
    if (next.subjectField !== null) {
      try {
        parseFieldPath(next.subjectField);
      } catch (err) {
        if (err instanceof FieldPathError) throw errors.invalidRequest(`subject_field: ${err.message}`);
        throw err;
      }
    }
  }

  async create(tenantId: string, actor: Actor, input: ProviderInput): Promise<ConnectProviderRecord> {
    const preset = input.preset ? PRESETS[input.preset] : undefined;
    const base = {
      name: '',
      preset: input.preset ?? null,
      kind: preset?.kind ?? ('oauth2' as ProviderKind),
      issuer: preset?.issuer ?? null,
      authorizationEndpoint: preset?.authorizationEndpoint ?? '',
      tokenEndpoint: preset?.tokenEndpoint ?? '',
      revocationEndpoint: preset?.revocationEndpoint ?? null,
      clientId: '',
      tokenEndpointAuthMethod: preset?.tokenEndpointAuthMethod ?? ('client_secret_basic' as UpstreamAuthMethod),
      scopes: preset ? [...preset.scopes] : [],
      pkce: true,
      authorizeParams: preset ? { ...preset.authorizeParams } : {},
      issParameterSupported: false,
      // The preset's userinfo document, for the subject when no ID token names it.
      userinfoEndpoint: preset?.userinfoEndpoint ?? null,
      subjectField: preset?.userinfoEndpoint ? preset.profile.subject : null,
      hasSecret: false,
    };
    const { next, secret } = await this.#resolve(base, input, true);
    const now = this.deps.clock.now();
    const id = newId('cpr', now);
    const { hasSecret: _h, ...fields } = next;
    const provider: ConnectProviderRecord = {
      ...fields,
      id,
      tenantId,
      clientSecretEnc: secret ? sealClientSecret(this.deps.envelope, tenantId, id, secret) : null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      await repos(trx, this.deps.db.dialect).connectProviders.insert(provider);
      await this.deps.events.record(trx, { tenantId, type: 'connect.provider.created', organizationId: null, actor, data: this.#auditData(provider) });
    });
    return provider;
  }

  async get(tenantId: string, id: string): Promise<ConnectProviderRecord> {
    const p = await repos(this.deps.db.kysely, this.deps.db.dialect).connectProviders.find(tenantId, id);
    if (!p) throw errors.notFound('provider not found');
    return p;
  }

  list(tenantId: string, opts: { after?: string; limit: number }): Promise<ConnectProviderRecord[]> {
    return repos(this.deps.db.kysely, this.deps.db.dialect).connectProviders.list(tenantId, opts);
  }

  async update(tenantId: string, actor: Actor, id: string, input: ProviderInput): Promise<ConnectProviderRecord> {
    const current = await this.get(tenantId, id);
    if (input.preset !== undefined && input.preset !== current.preset) throw errors.invalidRequest('preset cannot be changed; register a new provider');
    const { next, secret } = await this.#resolve({ ...current, hasSecret: current.clientSecretEnc !== null }, input, false);
    const { hasSecret: _h, ...fields } = next;
    const updated: ConnectProviderRecord = {
      ...current,
      ...fields,
      clientSecretEnc: secret === undefined ? current.clientSecretEnc : secret === null ? null : sealClientSecret(this.deps.envelope, tenantId, id, secret),
      updatedAt: this.deps.clock.now(),
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      if (!(await repos(trx, this.deps.db.dialect).connectProviders.update(updated))) throw errors.notFound('provider not found');
      const changed = Object.keys(input).filter((k) => k !== 'client_secret');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'connect.provider.updated',
        organizationId: null,
        actor,
        data: { ...this.#auditData(updated), changed, client_secret_changed: input.client_secret !== undefined },
      });
    });
    return updated;
  }

  /** Refused (409) while accounts are connected through the provider: remove them first. */
  async delete(tenantId: string, actor: Actor, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = repos(trx, this.deps.db.dialect);
      const count = await r.connectedAccounts.countByProvider(tenantId, id);
      if (count > 0) throw errors.conflict(`${count} connected account(s) use this provider; remove them first`);
      if (!(await r.connectProviders.delete(tenantId, id))) throw errors.notFound('provider not found');
      await this.deps.events.record(trx, { tenantId, type: 'connect.provider.deleted', organizationId: null, actor, data: { provider_id: id } });
    });
  }

  /** What the audit trail keeps of a provider: never the secret. */
  #auditData(p: ConnectProviderRecord) {
    return { provider_id: p.id, name: p.name, preset: p.preset, type: p.kind, issuer: p.issuer, client_id: p.clientId };
  }
}
