/**
 * OAuth clients (tenant-wide): create, read, list, update, delete, rotate the secret. The secret
 * is returned once and stored only as SHA-256.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Actor } from '../../events/catalogue.js';
import type { NewEvent } from '../../events/recorder.js';
import type { Clock } from '../../kernel/clock.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { errors } from '../../kernel/errors.js';
import { newId, newSecret } from '../../kernel/ids.js';
import { oauthErrors } from '../../oauth/errors.js';
import { usesSecret } from '../../oauth/client-auth/presented.js';
import { type ClientRecord, GRANT_TYPE } from '../../oauth/types.js';
import { DEFAULT_CLIENT_SETTINGS, type SigninClientSettings } from '../../oauth/authorize/types.js';
import type { OAuthClientRepo } from '../../storage/repos/oauth-clients.js';
import { type ClientMetadataInput, type ClientView, clientMetadata } from './schema.js';

export const CLIENT_SECRET_PREFIX = 'cs_';
const CONFIDENTIAL_ONLY = [GRANT_TYPE.clientCredentials, GRANT_TYPE.tokenExchange] as string[];

const notFound = () => errors.notFound('no such client');

function parse(input: unknown): ClientMetadataInput {
  const parsed = clientMetadata.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || 'body';
    if (issue?.path[0] === 'redirect_uris') throw oauthErrors.invalidRedirectUri(`${where}: ${issue.message}`);
    throw oauthErrors.invalidClientMetadata(`${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Cross-field rules RFC 7591 leaves to the server. */
function checkConsistency(c: ClientRecord): void {
  if (c.jwks && c.jwksUri) throw oauthErrors.invalidClientMetadata('jwks and jwks_uri are mutually exclusive');
  if (c.authMethod === 'private_key_jwt' && !c.jwks && !c.jwksUri) throw oauthErrors.invalidClientMetadata('private_key_jwt requires jwks or jwks_uri');
  if (c.authMethod === 'none' && c.grantTypes.some((g) => CONFIDENTIAL_ONLY.includes(g))) {
    throw oauthErrors.invalidClientMetadata('public clients may not use client_credentials or token exchange');
  }
  if (c.grantTypes.includes(GRANT_TYPE.authorizationCode) && c.redirectUris.length === 0) {
    throw oauthErrors.invalidRedirectUri('authorization_code requires redirect_uris');
  }
  if (c.tokenExchange && !c.grantTypes.includes(GRANT_TYPE.tokenExchange)) {
    throw oauthErrors.invalidClientMetadata('token_exchange policy without the token-exchange grant type');
  }
}

/** Applies metadata onto a record (absent fields keep their value). */
function apply(base: ClientRecord, input: ClientMetadataInput): ClientRecord {
  return {
    ...base,
    clientName: input.client_name ?? base.clientName,
    redirectUris: input.redirect_uris ?? base.redirectUris,
    grantTypes: input.grant_types ? [...new Set(input.grant_types)] : base.grantTypes,
    authMethod: input.token_endpoint_auth_method ?? base.authMethod,
    authMethodStrict: input.token_endpoint_auth_method_strict ?? base.authMethodStrict,
    jwks: input.jwks === undefined ? base.jwks : (input.jwks as ClientRecord['jwks']),
    jwksUri: input.jwks_uri === undefined ? base.jwksUri : input.jwks_uri,
    scopes: input.scope === undefined ? base.scopes : input.scope ? [...new Set(input.scope.split(' '))] : [],
    dpopBound: input.dpop_bound_access_tokens ?? base.dpopBound,
    allowedResources: input.allowed_resources ?? base.allowedResources,
    allowedOrigins: input.allowed_origins ? [...new Set(input.allowed_origins)] : base.allowedOrigins,
    tokenExchange: input.token_exchange === undefined ? base.tokenExchange : input.token_exchange,
  };
}

/** Where a client's sign-in settings live (the sign-in store). */
export interface SigninSettingsPort {
  clientSettings(tenantId: string, clientId: string): Promise<SigninClientSettings>;
  saveClientSettings(tenantId: string, clientId: string, s: SigninClientSettings, now: number): Promise<void>;
}

/** The sign-in settings an input changes, applied onto the current ones; undefined if none. */
function applySettings(base: SigninClientSettings, input: ClientMetadataInput): SigninClientSettings | undefined {
  const next: SigninClientSettings = {
    idTokenAlg: input.id_token_signed_response_alg ?? base.idTokenAlg,
    requirePar: input.require_pushed_authorization_requests ?? base.requirePar,
    postLogoutRedirectUris: input.post_logout_redirect_uris ?? base.postLogoutRedirectUris,
    thirdParty: input.third_party ?? base.thirdParty,
    backchannelLogoutUri: input.backchannel_logout_uri === undefined ? base.backchannelLogoutUri : input.backchannel_logout_uri,
    backchannelLogoutSessionRequired: input.backchannel_logout_session_required ?? base.backchannelLogoutSessionRequired,
    requireSignedRequestObject: input.require_signed_request_object ?? base.requireSignedRequestObject,
    profile: input.profile === undefined ? base.profile : input.profile,
    claims: input.claims ?? base.claims,
  };
  const touched =
    input.id_token_signed_response_alg !== undefined ||
    input.require_pushed_authorization_requests !== undefined ||
    input.post_logout_redirect_uris !== undefined ||
    input.third_party !== undefined ||
    input.backchannel_logout_uri !== undefined ||
    input.backchannel_logout_session_required !== undefined ||
    input.require_signed_request_object !== undefined ||
    input.profile !== undefined ||
    input.claims !== undefined;
  return touched ? next : undefined;
}

export function toView(c: ClientRecord, secret?: string, settings: SigninClientSettings = DEFAULT_CLIENT_SETTINGS): ClientView {
  return {
    client_id: c.id,
    client_id_issued_at: Math.floor(c.createdAt / 1000),
    ...(secret !== undefined ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_name: c.clientName,
    redirect_uris: c.redirectUris,
    grant_types: c.grantTypes,
    token_endpoint_auth_method: c.authMethod,
    token_endpoint_auth_method_strict: c.authMethodStrict,
    jwks: c.jwks,
    jwks_uri: c.jwksUri,
    scope: c.scopes.length > 0 ? c.scopes.join(' ') : null,
    dpop_bound_access_tokens: c.dpopBound,
    allowed_resources: c.allowedResources,
    allowed_origins: c.allowedOrigins,
    token_exchange: c.tokenExchange,
    id_token_signed_response_alg: settings.idTokenAlg,
    require_pushed_authorization_requests: settings.requirePar,
    post_logout_redirect_uris: settings.postLogoutRedirectUris,
    third_party: settings.thirdParty,
    backchannel_logout_uri: settings.backchannelLogoutUri,
    backchannel_logout_session_required: settings.backchannelLogoutSessionRequired,
    require_signed_request_object: settings.requireSignedRequestObject,
    profile: settings.profile,
    claims: settings.claims,
  };
}

/**
 * A FAPI 2.0 client authenticates with private_key_jwt only, so its registration must say so
 * (docs/oauth.md "FAPI 2.0"); a signed request object needs the client's keys.
 */
function checkSettingsConsistency(c: ClientRecord, s: SigninClientSettings): void {
  if (s.profile === 'fapi2' && c.authMethod !== 'private_key_jwt') {
    throw oauthErrors.invalidClientMetadata('profile fapi2 requires token_endpoint_auth_method private_key_jwt');
  }
  if (s.requireSignedRequestObject && !c.jwks && !c.jwksUri) {
    throw oauthErrors.invalidClientMetadata('require_signed_request_object requires jwks or jwks_uri');
  }
}

/** Changes made in-process (the CLI, tests) are the operator's. */
const SYSTEM: Actor = { type: 'system', id: null };

export class ClientService {
  constructor(
    private readonly repo: OAuthClientRepo,
    private readonly clock: Clock,
    /** Drops a client from this instance's cache after a change. */
    private readonly changed: (tenantId: string, clientId: string) => void = () => undefined,
    /**
     * Checks a URL Keyhall will call (`jwks_uri`, `backchannel_logout_uri`, named by `field`)
     * against the egress policy; returns the URL to store.
     */
    private readonly checkEgressUrl: (url: string, field: string) => Promise<string> = async (_url, field) => {
      throw oauthErrors.invalidClientMetadata(`${field} is not available here`);
    },
    private readonly signin: SigninSettingsPort = {
      clientSettings: async () => ({ ...DEFAULT_CLIENT_SETTINGS }),
      saveClientSettings: async () => undefined,
    },
    /** Runs a client write, its settings write and its audit event in one transaction. */
    private readonly atomic: <T>(
      fn: (clients: OAuthClientRepo, signin: SigninSettingsPort, record: (e: NewEvent) => Promise<unknown>) => Promise<T>,
    ) => Promise<T> = (fn) => fn(this.repo, this.signin, async () => undefined),
  ) {}

  #event(
    tenantId: string,
    type: 'client.created' | 'client.updated' | 'client.deleted' | 'client.secret_rotated',
    actor: Actor,
    data: Record<string, unknown>,
  ): NewEvent {
    return { tenantId, type, organizationId: null, actor, data };
  }

  async #view(c: ClientRecord, secret?: string): Promise<ClientView> {
    return toView(c, secret, await this.signin.clientSettings(c.tenantId, c.id));
  }

  /** The egress check of a new `jwks_uri`, as `invalid_client_metadata`. */
  async #checkRemoteKeys(before: ClientRecord | undefined, next: ClientRecord): Promise<void> {
    if (!next.jwksUri || next.jwksUri === before?.jwksUri) return;
    next.jwksUri = await this.checkEgressUrl(next.jwksUri, 'jwks_uri');
  }

  /** The egress check of a new `backchannel_logout_uri` (refused like a webhook URL), as `invalid_client_metadata`. */
  async #checkLogoutUri(before: SigninClientSettings | undefined, next: SigninClientSettings | undefined): Promise<void> {
    if (!next?.backchannelLogoutUri || next.backchannelLogoutUri === before?.backchannelLogoutUri) return;
    next.backchannelLogoutUri = await this.checkEgressUrl(next.backchannelLogoutUri, 'backchannel_logout_uri');
  }

  /**
   * Registers a client; a secret-based client gets its `client_secret` in this response only.
   * `audit` names one more event to record with it, in the same transaction (dynamic registration).
   */
  async create(tenantId: string, body: unknown, actor: Actor = SYSTEM, audit?: (created: ClientView) => NewEvent): Promise<ClientView> {
    const input = parse(body);
    const now = this.clock.now();
    const blank: ClientRecord = {
      id: newId('cli', now),
      tenantId,
      clientName: null,
      secretHash: null,
      authMethod: 'client_secret_basic',
      authMethodStrict: false,
      grantTypes: [GRANT_TYPE.authorizationCode],
      redirectUris: [],
      allowedResources: [],
      allowedOrigins: [],
      scopes: [],
      jwks: null,
      jwksUri: null,
      dpopBound: false,
      tokenExchange: null,
      createdAt: now,
      updatedAt: now,
      secretRotatedAt: null,
    };
    const client = apply(blank, input);
    checkConsistency(client);
    await this.#checkRemoteKeys(undefined, client);
    const secret = usesSecret(client.authMethod) ? newSecret(CLIENT_SECRET_PREFIX) : undefined;
    if (secret) client.secretHash = sha256Hex(secret);
    // One transaction: a client never exists without the settings it was registered with
    // (say, third-party consent).
    const settings = applySettings({ ...DEFAULT_CLIENT_SETTINGS }, input);
    await this.#checkLogoutUri(undefined, settings);
    checkSettingsConsistency(client, settings ?? DEFAULT_CLIENT_SETTINGS);
    const view = toView(client, secret, settings);
    await this.atomic(async (clients, signin, record) => {
      await clients.insert(client);
      if (settings) await signin.saveClientSettings(tenantId, client.id, settings, now);
      await record(
        this.#event(tenantId, 'client.created', actor, {
          client_id: client.id,
          client_name: client.clientName,
          grant_types: client.grantTypes,
          token_endpoint_auth_method: client.authMethod,
          redirect_uris: client.redirectUris,
          third_party: view.third_party,
        }),
      );
      if (audit) await record(audit(view));
    });
    this.changed(tenantId, client.id);
    return view;
  }

  async get(tenantId: string, clientId: string): Promise<ClientView> {
    return this.#view(await this.#find(tenantId, clientId));
  }

  async list(tenantId: string, opts: { after?: string; limit?: number } = {}): Promise<ClientView[]> {
    const records = await this.repo.list(tenantId, { after: opts.after, limit: Math.min(Math.max(opts.limit ?? 50, 1), 101) });
    return Promise.all(records.map((c) => this.#view(c)));
  }

  /**
   * Changes metadata. Moving to a secret-based method without a secret issues one (returned
   * once); moving away from one drops the stored hash.
   */
  async update(tenantId: string, clientId: string, body: unknown, actor: Actor = SYSTEM): Promise<ClientView> {
    const input = parse(body);
    const current = await this.#find(tenantId, clientId);
    const currentSettings = await this.signin.clientSettings(tenantId, clientId);
    const settings = applySettings(currentSettings, input);
    // Nothing changes: no write, no updated_at bump.
    if (isDeepStrictEqual(apply(current, input), current) && (settings === undefined || isDeepStrictEqual(settings, currentSettings))) {
      return toView(current, undefined, currentSettings);
    }
    const next = { ...apply(current, input), updatedAt: this.clock.now() };
    checkConsistency(next);
    checkSettingsConsistency(next, settings ?? currentSettings);
    await this.#checkRemoteKeys(current, next);
    await this.#checkLogoutUri(currentSettings, settings);
    let secret: string | undefined;
    if (!usesSecret(next.authMethod)) next.secretHash = null;
    else if (!next.secretHash) {
      secret = newSecret(CLIENT_SECRET_PREFIX);
      next.secretHash = sha256Hex(secret);
      next.secretRotatedAt = next.updatedAt;
    }
    const before = toView(current, undefined, currentSettings);
    const after = toView(next, undefined, settings ?? currentSettings);
    const changed = (Object.keys(after) as (keyof ClientView)[]).filter((k) => !isDeepStrictEqual(before[k], after[k]));
    await this.atomic(async (clients, signin, record) => {
      if (!(await clients.update(next))) throw notFound();
      if (settings) await signin.saveClientSettings(tenantId, clientId, settings, next.updatedAt);
      await record(this.#event(tenantId, 'client.updated', actor, { client_id: clientId, changed, secret_issued: secret !== undefined }));
    });
    this.changed(tenantId, clientId);
    return this.#view(next, secret);
  }

  async delete(tenantId: string, clientId: string, actor: Actor = SYSTEM): Promise<void> {
    await this.atomic(async (clients, _signin, record) => {
      if (!(await clients.delete(tenantId, clientId))) throw notFound();
      await record(this.#event(tenantId, 'client.deleted', actor, { client_id: clientId }));
    });
    this.changed(tenantId, clientId);
  }

  /** Replaces the secret; the old one stops working at once. */
  async rotateSecret(tenantId: string, clientId: string, actor: Actor = SYSTEM): Promise<ClientView> {
    const current = await this.#find(tenantId, clientId);
    if (!usesSecret(current.authMethod)) throw oauthErrors.invalidRequest('this client does not use a client secret');
    const secret = newSecret(CLIENT_SECRET_PREFIX);
    const now = this.clock.now();
    const next = { ...current, secretHash: sha256Hex(secret), secretRotatedAt: now, updatedAt: now };
    await this.atomic(async (clients, _signin, record) => {
      if (!(await clients.update(next))) throw notFound();
      await record(this.#event(tenantId, 'client.secret_rotated', actor, { client_id: clientId }));
    });
    this.changed(tenantId, clientId);
    return this.#view(next, secret);
  }

  async #find(tenantId: string, clientId: string): Promise<ClientRecord> {
    const client = await this.repo.find(tenantId, clientId);
    if (!client) throw notFound();
    return client;
  }
}
