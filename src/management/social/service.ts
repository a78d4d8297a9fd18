/**
 * Social connections of a tenant (docs/social.md): a preset (fixed endpoints), a generic OpenID
 * provider (its issuer discovered through the egress policy now) or a generic OAuth 2.0 provider
 * (its endpoints checked against the egress policy now; every request is checked again as it is
 * made). The client secret is sealed and never returned. Also the tenant's account-linking
 * setting and the identities linked to a user.
 */
import type { Actor } from '../../events/catalogue.js';
import { checkEgressUrl, checkEgressUrlResolved } from '../../egress/url.js';
import type { Envelope } from '../../kernel/crypto/envelope.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import { en } from '../../screens/i18n/index.js';
import { APPLE_ID, appleKey } from '../../social/apple.js';
import { SOCIAL_PRESETS, type SocialPresetName } from '../../social/presets.js';
import { MAX_SOCIAL_CONNECTIONS, sealSocialSecret } from '../../social/service.js';
import { chooseTokenAuthMethod, discoverIssuer } from '../../sso/oidc.js';
import type { AccountLinking, SocialConfig, SocialConnectionPatch, SocialConnectionRecord, SocialIdentityRecord } from '../../storage/repos/social.js';
import { idTokenAlgorithms, type UpstreamClient } from '../../upstream/client.js';
import { FieldPathError, parseFieldPath } from '../../upstream/profile.js';
import { anotherWayLeft, signInWays } from '../../users/sign-in-methods.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

export interface SocialDeps extends ManagementDeps {
  envelope: Envelope;
  upstream: UpstreamClient;
  /** After a connection is created, changed or deleted (committed): the login buttons' cache of this instance forgets the tenant. */
  onChanged?: (tenantId: string) => void;
}

export interface OAuth2Input {
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  emails_endpoint?: string | null;
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
  pkce?: boolean;
  fields: { subject: string; email?: string; email_verified?: string; name?: string; picture?: string };
}

export interface AppleInput {
  team_id: string;
  key_id: string;
  private_key: string;
}

export interface SocialConnectionInput {
  name?: string;
  client_id?: string;
  client_secret?: string | null;
  apple?: AppleInput;
  vault_provider_id?: string | null;
  scopes?: string[];
  sign_in?: boolean;
  sign_up?: boolean;
  display_order?: number;
}

export type CreateSocialConnectionInput = SocialConnectionInput & {
  client_id: string;
  preset?: SocialPresetName;
  oidc?: { issuer: string };
  oauth2?: OAuth2Input;
};

/** The public view: never the client secret, only whether there is one. */
export function socialConnectionView(c: SocialConnectionRecord, issuer: string) {
  const k = c.config;
  return {
    id: c.id,
    name: c.name,
    kind: c.kind,
    preset: c.preset,
    client_id: c.clientId,
    has_client_secret: c.secretEnc !== null,
    scopes: c.scopes,
    sign_in: c.signIn,
    sign_up: c.signUp,
    display_order: c.displayOrder,
    redirect_uri: `${issuer}/social/${c.id}/callback`,
    issuer: k.issuer,
    authorization_endpoint: k.authorizationEndpoint,
    token_endpoint: k.tokenEndpoint,
    userinfo_endpoint: k.userinfoEndpoint,
    emails_endpoint: k.emailsEndpoint,
    token_endpoint_auth_method: k.tokenAuthMethod,
    pkce: k.pkce,
    response_mode: k.authorizeParams.response_mode === 'form_post' ? ('form_post' as const) : ('query' as const),
    apple: k.apple ? { team_id: k.apple.teamId, key_id: k.apple.keyId } : null,
    vault_provider_id: c.vaultProviderId,
    fields: {
      subject: k.profile.subject,
      email: k.profile.email ?? null,
      email_verified: k.profile.emailVerified ?? null,
      name: k.profile.name ?? null,
      picture: k.profile.picture ?? null,
    },
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

export function identityView(i: SocialIdentityRecord) {
  return {
    id: i.id,
    connection_id: i.connectionId,
    subject: i.subject,
    email: i.email,
    email_verified: i.emailVerified,
    linked_at: iso(i.linkedAt),
    last_login_at: iso(i.lastLoginAt),
  };
}

/** An Apple key as stored: its ids in the configuration (the PEM is sealed as the connection's secret). */
function appleConfig(a: AppleInput): { teamId: string; keyId: string } {
  if (!APPLE_ID.test(a.team_id)) throw errors.invalidRequest('apple.team_id: ten upper-case letters or digits');
  if (!APPLE_ID.test(a.key_id)) throw errors.invalidRequest('apple.key_id: ten upper-case letters or digits');
  if (!appleKey(a.private_key)) throw errors.invalidRequest('apple.private_key: not an EC P-256 private key in PEM (PKCS #8, the .p8 file)');
  return { teamId: a.team_id, keyId: a.key_id };
}

const OIDC_PROFILE = { subject: 'sub', email: 'email', emailVerified: 'email_verified', name: 'name', picture: 'picture' };

export class SocialConnectionService {
  constructor(private readonly deps: SocialDeps) {}

  /** A fetched URL: its addresses must be allowed by the egress policy now (and again at every request). */
  async #fetched(url: string, field: string): Promise<string> {
    const { policy, resolver } = this.deps.upstream.http;
    const decision = await checkEgressUrlResolved(url, policy, { field, resolver });
    if (!decision.ok) throw decision.error;
    return decision.url;
  }

  /** The authorization endpoint is visited by browsers, not by Keyhall: an http(s) URL. */
  #browserUrl(url: string, field: string): string {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw errors.invalidRequest(`${field}: not a URL`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw errors.invalidRequest(`${field}: must be an https URL`);
    if (u.hash !== '' || u.username !== '' || u.password !== '') throw errors.invalidRequest(`${field}: no fragment or credentials`);
    return u.href;
  }

  async #config(
    input: CreateSocialConnectionInput,
  ): Promise<{ kind: SocialConnectionRecord['kind']; preset: string | null; config: SocialConfig; scopes: string[]; label: string | null }> {
    const given = [input.preset !== undefined, input.oidc !== undefined, input.oauth2 !== undefined].filter(Boolean).length;
    if (given !== 1) throw errors.invalidRequest('give exactly one of preset, oidc, oauth2');
    if (input.preset !== undefined) {
      const p = SOCIAL_PRESETS[input.preset];
      // Fixed public endpoints: checked in shape here (https), and by the egress policy at every request.
      for (const url of [p.config.tokenEndpoint, p.config.userinfoEndpoint, p.config.jwksUri, p.config.emailsEndpoint]) {
        if (url === null) continue;
        const d = checkEgressUrl(url, this.deps.upstream.http.policy, { field: 'preset' });
        if (!d.ok) throw d.error;
      }
      return { kind: p.kind, preset: input.preset, config: structuredClone(p.config) as SocialConfig, scopes: [...p.scopes], label: p.label };
    }
    if (input.oidc !== undefined) {
      const m = await discoverIssuer(input.oidc.issuer, this.deps.upstream);
      const userinfo = typeof m.userinfo_endpoint === 'string' ? await this.#fetched(m.userinfo_endpoint, 'oidc.issuer: userinfo_endpoint') : null;
      const algs = idTokenAlgorithms(m);
      if (algs.length === 0) throw errors.invalidRequest('oidc.issuer: the provider signs ID tokens with no algorithm Keyhall accepts');
      const method = chooseTokenAuthMethod(m, true);
      if (method === undefined || method === 'none') throw errors.invalidRequest('oidc.issuer: the provider lists no client authentication Keyhall supports');
      const challenge = m.code_challenge_methods_supported;
      return {
        kind: 'oidc',
        preset: null,
        scopes: ['openid', 'email', 'profile'],
        label: null,
        config: {
          issuer: m.issuer,
          authorizationEndpoint: String(m.authorization_endpoint),
          tokenEndpoint: String(m.token_endpoint),
          userinfoEndpoint: userinfo,
          jwksUri: String(m.jwks_uri),
          emailsEndpoint: null,
          tokenAuthMethod: method,
          issParameterSupported: m.authorization_response_iss_parameter_supported === true,
          idTokenAlgs: algs,
          pkce: !Array.isArray(challenge) || challenge.includes('S256'),
          profile: OIDC_PROFILE,
          authorizeParams: {},
        },
      };
    }
    const o = input.oauth2!;
    const fields = { subject: o.fields.subject, email: o.fields.email, emailVerified: o.fields.email_verified, name: o.fields.name, picture: o.fields.picture };
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) continue;
      try {
        parseFieldPath(v);
      } catch (err) {
        if (err instanceof FieldPathError) throw errors.invalidRequest(`oauth2.fields.${k}: ${err.message}`);
        throw err;
      }
    }
    return {
      kind: 'oauth2',
      preset: null,
      scopes: [],
      label: null,
      config: {
        issuer: null,
        authorizationEndpoint: this.#browserUrl(o.authorization_endpoint, 'oauth2.authorization_endpoint'),
        tokenEndpoint: await this.#fetched(o.token_endpoint, 'oauth2.token_endpoint'),
        userinfoEndpoint: await this.#fetched(o.userinfo_endpoint, 'oauth2.userinfo_endpoint'),
        jwksUri: null,
        emailsEndpoint: o.emails_endpoint ? await this.#fetched(o.emails_endpoint, 'oauth2.emails_endpoint') : null,
        tokenAuthMethod: o.token_endpoint_auth_method ?? 'client_secret_basic',
        issParameterSupported: false,
        idTokenAlgs: [],
        pkce: o.pkce ?? true,
        profile: Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as unknown as SocialConfig['profile'],
        authorizeParams: {},
      },
    };
  }

  async create(tenantId: string, actor: Actor, input: CreateSocialConnectionInput): Promise<SocialConnectionRecord> {
    const made = await this.#config(input);
    const name = input.name ?? made.label;
    if (!name) throw errors.invalidRequest('name: required for a provider that is not a preset');
    const now = this.deps.clock.now();
    const id = newId('soc', now);
    if (input.apple !== undefined) {
      if (made.kind !== 'oidc') throw errors.invalidRequest('apple: only for the apple preset or an OpenID provider');
      if (input.client_secret !== undefined) throw errors.invalidRequest('apple: the client secret is signed with the key; give no client_secret');
      made.config.apple = appleConfig(input.apple);
      made.config.tokenAuthMethod = 'client_secret_post';
      made.config.authorizeParams = { ...made.config.authorizeParams, response_mode: 'form_post' };
    }
    const secret = input.apple?.private_key ?? input.client_secret ?? null;
    if (input.vault_provider_id) await this.#checkVaultProvider(tenantId, input.vault_provider_id, input.client_id, made.config.tokenEndpoint);
    const c: SocialConnectionRecord = {
      id,
      tenantId,
      name,
      kind: made.kind,
      preset: made.preset,
      clientId: input.client_id,
      secretEnc: secret === null ? null : sealSocialSecret(this.deps.envelope, tenantId, id, secret),
      config: made.config,
      scopes: input.scopes ?? made.scopes,
      signIn: input.sign_in ?? true,
      signUp: input.sign_up ?? true,
      displayOrder: input.display_order ?? 0,
      vaultProviderId: input.vault_provider_id ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if ((await r.socialConnections.list(tenantId, MAX_SOCIAL_CONNECTIONS)).length >= MAX_SOCIAL_CONNECTIONS) {
        throw errors.invalidRequest(`a tenant can have at most ${MAX_SOCIAL_CONNECTIONS} social connections`);
      }
      await r.socialConnections.insert(c);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'social_connection.created',
        organizationId: null,
        actor,
        data: { connection_id: id, kind: c.kind, preset: c.preset, issuer: c.config.issuer, sign_in: c.signIn, sign_up: c.signUp },
      });
    });
    this.deps.onChanged?.(tenantId);
    return c;
  }

  /**
   * The vault provider a connection keeps its tokens under must refresh them: the same client at
   * the same token endpoint.
   */
  async #checkVaultProvider(tenantId: string, providerId: string, clientId: string, tokenEndpoint: string): Promise<void> {
    const p = await reposOf(this.deps).connectProviders.find(tenantId, providerId);
    if (!p) throw errors.invalidRequest('vault_provider_id: no such connect provider');
    if (p.clientId !== clientId || p.tokenEndpoint !== tokenEndpoint)
      throw errors.invalidRequest("vault_provider_id: the provider must have this connection's client_id and token endpoint (it refreshes these tokens)");
  }

  async get(tenantId: string, id: string): Promise<SocialConnectionRecord> {
    const c = await reposOf(this.deps).socialConnections.find(tenantId, id);
    if (!c) throw errors.notFound('social connection not found');
    return c;
  }

  list(tenantId: string): Promise<SocialConnectionRecord[]> {
    return reposOf(this.deps).socialConnections.list(tenantId, MAX_SOCIAL_CONNECTIONS);
  }

  async update(tenantId: string, actor: Actor, id: string, input: SocialConnectionInput): Promise<SocialConnectionRecord> {
    const current = await this.get(tenantId, id);
    const patch: SocialConnectionPatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.client_id !== undefined) patch.clientId = input.client_id;
    if (input.apple !== undefined) {
      if (!current.config.apple) throw errors.invalidRequest('apple: this connection authenticates with a client secret');
      patch.config = { ...current.config, apple: appleConfig(input.apple) };
      patch.secretEnc = sealSocialSecret(this.deps.envelope, tenantId, id, input.apple.private_key);
    }
    if (input.client_secret !== undefined) {
      if (current.config.apple) throw errors.invalidRequest('client_secret: this connection signs its client secret with its Apple key');
      patch.secretEnc = input.client_secret === null ? null : sealSocialSecret(this.deps.envelope, tenantId, id, input.client_secret);
    }
    if (input.vault_provider_id !== undefined) patch.vaultProviderId = input.vault_provider_id;
    const vaultProvider = patch.vaultProviderId === undefined ? current.vaultProviderId : patch.vaultProviderId;
    if (vaultProvider && (input.vault_provider_id !== undefined || input.client_id !== undefined))
      await this.#checkVaultProvider(tenantId, vaultProvider, patch.clientId ?? current.clientId, current.config.tokenEndpoint);
    if (input.scopes !== undefined) patch.scopes = input.scopes;
    if (input.sign_in !== undefined) patch.signIn = input.sign_in;
    if (input.sign_up !== undefined) patch.signUp = input.sign_up;
    if (input.display_order !== undefined) patch.displayOrder = input.display_order;
    const fields = Object.keys(input).sort();
    const updated = await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const updated = await reposOf(this.deps, trx).socialConnections.update(tenantId, id, patch, this.deps.clock.now());
      if (!updated) throw errors.notFound('social connection not found');
      await this.deps.events.record(trx, { tenantId, type: 'social_connection.updated', organizationId: null, actor, data: { connection_id: id, fields } });
      return updated;
    });
    this.deps.onChanged?.(tenantId);
    return updated;
  }

  async delete(tenantId: string, actor: Actor, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      if (!(await reposOf(this.deps, trx).socialConnections.delete(tenantId, id))) throw errors.notFound('social connection not found');
      await this.deps.events.record(trx, { tenantId, type: 'social_connection.deleted', organizationId: null, actor, data: { connection_id: id } });
    });
    this.deps.onChanged?.(tenantId);
  }

  async settings(tenantId: string) {
    const s = await reposOf(this.deps).socialSettings.get(tenantId);
    return { account_linking: s.accountLinking, updated_at: s.updatedAt === null ? null : iso(s.updatedAt) };
  }

  async setSettings(tenantId: string, actor: Actor, accountLinking: AccountLinking) {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      await reposOf(this.deps, trx).socialSettings.set(tenantId, accountLinking, this.deps.clock.now());
      await this.deps.events.record(trx, { tenantId, type: 'social_settings.updated', organizationId: null, actor, data: { account_linking: accountLinking } });
    });
    return this.settings(tenantId);
  }

  async identities(tenantId: string, userId: string): Promise<SocialIdentityRecord[]> {
    const r = reposOf(this.deps);
    if (!(await r.users.find(tenantId, userId))) throw errors.notFound('user not found');
    return r.socialIdentities.listByUser(tenantId, userId, 100);
  }

  /**
   * Unlinks an identity (`identity.unlinked`); refused with 409 `last_sign_in_method` when the
   * user would be left with no way to sign in: no password, no passkey, no other identity.
   */
  async unlink(tenantId: string, actor: Actor, userId: string, identityId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      // The user row locked first: two unlinks at once cannot both see the other identity left.
      await r.users.lock(tenantId, userId, this.deps.db.dialect);
      const identity = (await r.socialIdentities.listByUser(tenantId, userId, 100)).find((i) => i.id === identityId);
      if (!identity) throw errors.notFound('identity not found');
      if (!anotherWayLeft(await signInWays(r, tenantId, userId))) throw errors.lastSignInMethod(en['error.last_sign_in_method']);
      const removed = await r.socialIdentities.delete(tenantId, userId, identityId);
      if (!removed) throw errors.notFound('identity not found');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'identity.unlinked',
        organizationId: null,
        actor,
        data: { user_id: userId, connection_id: removed.connectionId, identity_id: identityId },
      });
    });
  }
}
