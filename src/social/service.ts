/**
 * Social sign-in (docs/social.md): the tenant's connections to upstream identity providers on
 * the hosted login. A round trip (state, PKCE, nonce for OIDC) bound to the browser that started
 * it and consumed once; the callback's answer validated by the one upstream client (RFC 9207
 * `iss`, the code grant, the ID token, userinfo read by field paths, a GitHub-style emails list);
 * then the linked user, or a new one, or an automatic link by verified email — never a takeover
 * through an address the upstream did not verify — and the session, in one transaction with
 * their events. Framework-free.
 */
import { performance } from 'node:perf_hooks';
import { Lru } from '../kernel/lru.js';
import type { Actor, EventType } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { sha256Hex } from '../kernel/crypto/hash.js';
import { newId } from '../kernel/ids.js';
import type { SessionRecord } from '../oauth/authorize/types.js';
import type { MfaService } from '../screens/mfa/service.js';
import type { RequestMeta, SigninService } from '../screens/service.js';
import { owedAfterUpstream } from '../signin/second-factor.js';
import type { SsoContinuation } from '../sso/service.js';
import { type Db, type Executor, isUniqueViolation } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import type { SocialConnectionRecord } from '../storage/repos/social.js';
import type { VaultService } from '../connect/vault.js';
import { newRoundTrip, type RoundTripSecrets, type UpstreamClient, UpstreamError, type UpstreamProvider, type UpstreamTokens } from '../upstream/client.js';
import { appleClientSecret, appleUserName } from './apple.js';
import { readFieldPath } from '../upstream/profile.js';
import { normalizeEmail } from '../users/emails.js';

/** An upstream round trip must come back within this time. */
export const SOCIAL_STATE_TTL_SECONDS = 600;

/** The reason codes of `login.social_failed` (and of the error page). */
export type SocialFailureReason =
  | 'connection_unknown'
  | 'connection_disabled'
  | 'state_invalid'
  | 'browser_mismatch'
  | 'upstream_error'
  | 'token_error'
  | 'invalid_callback'
  | 'invalid_response'
  | 'unreachable'
  | 'email_missing'
  | 'signup_disabled'
  | 'account_exists'
  | 'identity_in_use'
  | 'link_session_mismatch';

export class SocialLoginError extends Error {
  constructor(
    readonly reason: SocialFailureReason,
    readonly connection?: SocialConnectionRecord,
    /** For the log only: what the upstream or the validation said (never a code or token). */
    readonly detail?: string,
  ) {
    super(reason);
  }
}

export interface SocialSigninDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  envelope: Envelope;
  upstream: UpstreamClient;
  signin: Pick<SigninService, 'openSession' | 'current'>;
  mfa: Pick<MfaService, 'secondFactorNeeded'>;
  /** Where a connection with a vault provider keeps the sign-in's upstream tokens. */
  vault: Pick<VaultService, 'keepFromSignin'>;
  /** How long this instance keeps a tenant's login buttons (KEYHALL_CACHE_TTL_MS); 0: no cache. */
  cacheTtlMs?: number;
}

/** What the upstream said about the person. */
export interface SocialProfile {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
}

export type SocialFinish =
  | { kind: 'ok'; session: SessionRecord; token: string; userId: string; continuation: SsoContinuation }
  /** An explicit link from /account was made (or was there already): the browser's session is unchanged. */
  | { kind: 'linked'; userId: string; continuation: SsoContinuation };

/** A button of the hosted login. */
export interface SocialButton {
  id: string;
  name: string;
}

type StoredTrip = SsoContinuation & { nonce: string | null; codeVerifier: string | null };

const stateContext = (stateHash: string) => `social_state:${stateHash}`;
/** Apple's `user` field, carried sealed from the form_post to the callback (never in clear in a URL). */
const userFieldContext = (tenantId: string, connectionId: string, state: string) => `social_form_user:${tenantId}:${connectionId}:${sha256Hex(state)}`;
/** The fields of a form_post answer the callback reads (RFC 6749 §4.1.2, RFC 9207 `iss`). */
const FORM_POST_FIELDS = ['code', 'state', 'error', 'error_description', 'iss'];
/** The query parameter that carries the sealed `user` field. */
export const SEALED_USER_PARAM = 'kh_user';
const secretContext = (tenantId: string, connectionId: string) => `social_secret:${tenantId}:${connectionId}`;

/** A connection's client secret under envelope encryption, bound to its tenant and connection. */
export const sealSocialSecret = (envelope: Envelope, tenantId: string, connectionId: string, secret: string) =>
  envelope.encrypt(secret, secretContext(tenantId, connectionId));

/** At most this many connections are shown on the login page. */
export const MAX_SOCIAL_CONNECTIONS = 20;

const text = (v: unknown, max: number): string | null => {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  return typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : null;
};
const at = (doc: unknown, path: string | undefined) => (path === undefined ? undefined : readFieldPath(doc, path));
const isTrue = (v: unknown) => v === true || v === 'true';
/** A picture is kept only as an https URL (it ends up in ID tokens and on pages). */
const pictureOf = (v: unknown): string | null => {
  const s = text(v, 2048);
  if (s === null) return null;
  try {
    return new URL(s).protocol === 'https:' ? s : null;
  } catch {
    return null;
  }
};

/** The reason of an upstream failure. */
function reasonOf(err: UpstreamError): SocialFailureReason {
  switch (err.kind) {
    case 'denied':
      return 'upstream_error';
    case 'refused':
      return 'token_error';
    case 'unreachable':
      return 'unreachable';
    case 'invalid_callback':
      return 'invalid_callback';
    case 'invalid_response':
      return 'invalid_response';
  }
}

/** The connection as the upstream client sees it. */
export function providerOf(c: SocialConnectionRecord): UpstreamProvider {
  const k = c.config;
  return {
    issuer: k.issuer,
    authorizationEndpoint: k.authorizationEndpoint,
    tokenEndpoint: k.tokenEndpoint,
    revocationEndpoint: null,
    userinfoEndpoint: k.userinfoEndpoint,
    jwksUri: k.jwksUri,
    clientId: c.clientId,
    tokenEndpointAuthMethod: c.secretEnc === null ? 'none' : k.tokenAuthMethod,
    issParameterSupported: k.issParameterSupported,
    ...(c.kind === 'oidc' ? { idTokenAlgs: k.idTokenAlgs } : {}),
  };
}

/** The address a GitHub-style emails list names: the primary one, with whether the provider verified it. */
export function primaryEmail(list: unknown): { email: string; verified: boolean } | null {
  if (!Array.isArray(list)) return null;
  const entries = list.filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && typeof e.email === 'string');
  const primary = entries.find((e) => e.primary === true) ?? entries.find((e) => e.verified === true);
  return primary ? { email: String(primary.email).slice(0, 254), verified: primary.verified === true } : null;
}

/** The other of two simultaneous first sign-ins of one person committed first: run again. */
class ConcurrentFirstLogin extends Error {}

export class SocialSigninService {
  /** Each tenant's login buttons, per instance (a hosted login page would otherwise read the connections every time). */
  readonly #buttons = new Lru<string, { at: number; buttons: Promise<SocialButton[]> }>(10_000);

  constructor(private readonly deps: SocialSigninDeps) {}

  /** A change on this instance is seen at once; one made on another within the cache's TTL. */
  invalidateButtons(tenantId: string): void {
    this.#buttons.delete(tenantId);
  }

  #repos(executor: Executor = this.deps.db.kysely) {
    return repos(executor, this.deps.db.dialect);
  }

  redirectUri(issuer: string, connectionId: string): string {
    return `${issuer}/social/${connectionId}/callback`;
  }

  /** The login page's buttons: every connection enabled for sign-in or sign-up, in display order. */
  buttons(tenantId: string): Promise<SocialButton[]> {
    const ttl = this.deps.cacheTtlMs ?? 0;
    const now = performance.now();
    const hit = this.#buttons.get(tenantId);
    if (hit && now - hit.at < ttl) return hit.buttons;
    const buttons = this.#repos()
      .socialConnections.list(tenantId, MAX_SOCIAL_CONNECTIONS)
      .then((list) => list.filter((c) => c.signIn || c.signUp).map((c) => ({ id: c.id, name: c.name })));
    if (ttl > 0) {
      const entry = { at: now, buttons };
      this.#buttons.set(tenantId, entry);
      buttons.catch(() => {
        if (this.#buttons.get(tenantId) === entry) this.#buttons.delete(tenantId);
      });
    }
    return buttons;
  }

  /** The connection an /authorize `connection` hint names, when it is one of this tenant's enabled social connections. */
  async forHint(tenantId: string, hint: string | null | undefined): Promise<string | undefined> {
    if (!hint?.startsWith('soc_')) return undefined;
    const c = await this.#repos().socialConnections.find(tenantId, hint);
    return c && (c.signIn || c.signUp) ? c.id : undefined;
  }

  async #connection(tenantId: string, id: string): Promise<SocialConnectionRecord> {
    const c = id.length <= 100 ? await this.#repos().socialConnections.find(tenantId, id) : undefined;
    if (!c) throw new SocialLoginError('connection_unknown');
    if (!c.signIn && !c.signUp) throw new SocialLoginError('connection_disabled', c);
    return c;
  }

  /**
   * Starts a round trip: a single-use state bound to `browser` (the hash of its cookie value is
   * stored), the nonce and PKCE verifier sealed; returns the upstream URL.
   */
  async start(
    tenant: { id: string; issuer: string },
    connectionId: string,
    browser: string,
    continuation: SsoContinuation,
    loginHint?: string,
  ): Promise<string> {
    const c = await this.#connection(tenant.id, connectionId);
    const trip = newRoundTrip({ pkce: c.config.pkce, nonce: c.kind === 'oidc' });
    const now = this.deps.clock.now();
    const stateHash = sha256Hex(trip.state);
    const stored: StoredTrip = { nonce: trip.nonce, codeVerifier: trip.codeVerifier, ...continuation };
    await this.#repos().upstreamRoundTrips.insert({
      stateHash,
      tenantId: tenant.id,
      purpose: 'social',
      upstreamId: c.id,
      browserHash: sha256Hex(browser),
      secretsEnc: this.deps.envelope.encrypt(JSON.stringify(stored), stateContext(stateHash)),
      resume: null,
      createdAt: now,
      expiresAt: now + SOCIAL_STATE_TTL_SECONDS * 1000,
      consumedAt: null,
    });
    return this.deps.upstream.authorizationUrl(providerOf(c), {
      redirectUri: this.redirectUri(tenant.issuer, c.id),
      scopes: c.scopes,
      trip,
      params: { ...c.config.authorizeParams, ...(loginHint ? { login_hint: loginHint } : {}) },
    });
  }

  /** Consumes the round trip `state` names, only for the browser that started it. */
  async #consume(c: SocialConnectionRecord, state: string | null, browser: string | undefined): Promise<{ trip: RoundTripSecrets; stored: StoredTrip }> {
    if (!state || state.length > 200) throw new SocialLoginError('state_invalid', c);
    const r = this.#repos().upstreamRoundTrips;
    const stateHash = sha256Hex(state);
    const row = await r.find(c.tenantId, 'social', stateHash);
    if (!row || row.upstreamId !== c.id) throw new SocialLoginError('state_invalid', c);
    if (!browser || sha256Hex(browser) !== row.browserHash) throw new SocialLoginError('browser_mismatch', c);
    if (!(await r.consume(row, this.deps.clock.now()))) throw new SocialLoginError('state_invalid', c);
    const stored = JSON.parse(this.deps.envelope.decrypt(row.secretsEnc, stateContext(stateHash))) as StoredTrip;
    return { trip: { state, nonce: stored.nonce, codeVerifier: stored.codeVerifier }, stored };
  }

  /** Who the upstream says the person is: the ID token (OIDC) and/or the userinfo document, and the emails list. */
  async #profile(
    c: SocialConnectionRecord,
    params: URLSearchParams,
    redirectUri: string,
    trip: RoundTripSecrets,
  ): Promise<{ profile: SocialProfile; tokens: UpstreamTokens }> {
    const p = providerOf(c);
    const stored = c.secretEnc === null ? null : this.deps.envelope.decrypt(c.secretEnc, secretContext(c.tenantId, c.id));
    const secret = stored !== null && c.config.apple ? await appleClientSecret(stored, c.config.apple, c.clientId, this.deps.clock.now()) : stored;
    const paths = c.config.profile;
    try {
      const tokens = await this.deps.upstream.exchangeCode(p, secret, params, { redirectUri, trip });
      let doc: Record<string, unknown> = {};
      if (c.kind === 'oidc') {
        const claims = tokens.idTokenClaims;
        if (!claims || typeof claims.sub !== 'string') throw new SocialLoginError('invalid_response', c, 'no ID token');
        // Userinfo adds what the ID token leaves out; it must be about the same subject.
        const missing = claims.email === undefined || claims.name === undefined;
        const info = missing && c.config.userinfoEndpoint ? await this.deps.upstream.userinfo(p, tokens.accessToken, claims.sub) : {};
        doc = { ...info, ...claims };
      } else {
        doc = await this.deps.upstream.userinfo(p, tokens.accessToken);
      }
      const subject = text(at(doc, paths.subject), 255);
      if (subject === null) throw new SocialLoginError('invalid_response', c, 'the upstream named no subject');
      let email = text(at(doc, paths.email), 254);
      let emailVerified = email !== null && isTrue(at(doc, paths.emailVerified));
      if (c.config.emailsEndpoint) {
        const primary = primaryEmail(await this.deps.upstream.resource(tokens.accessToken, c.config.emailsEndpoint));
        if (primary) ({ email, verified: emailVerified } = primary);
      }
      // Apple names the person only in its first form_post answer (the `user` field).
      const name = text(at(doc, paths.name), 200) ?? (c.config.apple ? appleUserName(this.#openUserField(c, params)) : null);
      return { profile: { subject, email, emailVerified, name, picture: pictureOf(at(doc, paths.picture)) }, tokens };
    } catch (err) {
      if (err instanceof UpstreamError) throw new SocialLoginError(reasonOf(err), c, err.message.slice(0, 200));
      throw err;
    }
  }

  /**
   * The upstream's form_post answer (`response_mode=form_post`, Apple): a cross-site POST, which
   * carries neither the CSRF token nor the SameSite=Lax binding cookie. Nothing is consumed or
   * trusted here: only for a connection that asked for form_post, the answer's fields go on as the
   * query of the callback (the `user` field sealed to the connection and state), where the
   * browser's top-level GET brings its binding cookie and the state is checked as for any answer.
   */
  async formPostCallback(tenantId: string, connectionId: string, field: (name: string) => string | undefined, meta: RequestMeta): Promise<string> {
    let c: SocialConnectionRecord | undefined;
    try {
      c = await this.#connection(tenantId, connectionId);
      return this.#formPostQuery(c, field);
    } catch (err) {
      if (err instanceof SocialLoginError) await this.#failed(tenantId, err.connection ?? c, err.reason, meta);
      throw err;
    }
  }

  /** The answer's fields (each once; a repeated one is absent) as the callback's query. */
  #formPostQuery(c: SocialConnectionRecord, field: (name: string) => string | undefined): string {
    const tenantId = c.tenantId;
    if (c.config.authorizeParams.response_mode !== 'form_post')
      throw new SocialLoginError('invalid_callback', c, 'a form_post answer for a connection that uses the query');
    const state = field('state');
    if (state === undefined || state.length > 200) throw new SocialLoginError('state_invalid', c);
    const q = new URLSearchParams();
    for (const f of FORM_POST_FIELDS) {
      const v = field(f);
      if (v !== undefined && v.length <= 4096) q.set(f, v);
    }
    const user = field('user');
    if (user !== undefined && user.length <= 2048) q.set(SEALED_USER_PARAM, this.deps.envelope.encrypt(user, userFieldContext(tenantId, c.id, state)));
    return `/social/${encodeURIComponent(c.id)}/callback?${q}`;
  }

  /** Apple's `user` field as the form_post carried it, when it is there and opens for this connection and state. */
  #openUserField(c: SocialConnectionRecord, params: URLSearchParams): string | null {
    const sealed = params.get(SEALED_USER_PARAM);
    const state = params.get('state');
    if (!sealed || !state) return null;
    try {
      return this.deps.envelope.decrypt(sealed, userFieldContext(c.tenantId, c.id, state));
    } catch {
      return null;
    }
  }

  /**
   * The callback: the state is consumed (single use, this browser only), the answer validated,
   * then the user found, created or linked, and a session opened. Throws SocialLoginError
   * (already audited as `login.social_failed`).
   */
  async finish(
    tenant: { id: string; issuer: string },
    connectionId: string,
    callbackUrl: URL,
    browser: string | undefined,
    meta: RequestMeta,
    previousToken?: string,
  ): Promise<SocialFinish> {
    let c: SocialConnectionRecord | undefined;
    try {
      c = await this.#connection(tenant.id, connectionId);
      const { trip, stored } = await this.#consume(c, callbackUrl.searchParams.get('state'), browser);
      const { profile, tokens } = await this.#profile(c, callbackUrl.searchParams, this.redirectUri(tenant.issuer, c.id), trip);
      const continuation: SsoContinuation = { flow: stored.flow, returnTo: stored.returnTo, organizationId: stored.organizationId, acr: stored.acr };
      if (stored.linkUserId !== undefined) return await this.#link(c, profile, { ...continuation, linkUserId: stored.linkUserId }, previousToken);
      const conn = c;
      const attempt = () => this.#signIn(conn, profile, tokens, continuation, meta, previousToken);
      let done;
      try {
        done = await attempt();
      } catch (err) {
        if (!isUniqueViolation(err) && !(err instanceof ConcurrentFirstLogin)) throw err;
        done = await attempt();
      }
      return { kind: 'ok', ...done, continuation };
    } catch (err) {
      if (err instanceof SocialLoginError) await this.#failed(tenant.id, err.connection ?? c, err.reason, meta);
      throw err;
    }
  }

  /**
   * An explicit link from /account (docs/account.md): the browser must still be signed in as the
   * user who started it; the upstream subject is linked to that user, unless it already belongs
   * to another (`identity_in_use`, never moved). Linked already: nothing changes.
   */
  async #link(c: SocialConnectionRecord, profile: SocialProfile, continuation: SsoContinuation, sessionToken: string | undefined): Promise<SocialFinish> {
    const tenantId = c.tenantId;
    const userId = continuation.linkUserId!;
    const current = await this.deps.signin.current(tenantId, sessionToken);
    if (current?.userId !== userId) throw new SocialLoginError('link_session_mismatch', c);
    const seen = { email: profile.email, emailVerified: profile.emailVerified, name: profile.name, picture: profile.picture };
    const attempt = () =>
      this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const r = this.#repos(trx);
        const now = this.deps.clock.now();
        const identity = await r.socialIdentities.find(tenantId, c.id, profile.subject);
        if (identity && identity.userId !== userId) throw new SocialLoginError('identity_in_use', c);
        if (identity) return;
        const identityId = newId('idn', now);
        await r.socialIdentities.insert({
          id: identityId,
          tenantId,
          connectionId: c.id,
          subject: profile.subject,
          userId,
          ...seen,
          linkedAt: now,
          lastLoginAt: now,
        });
        await this.#record(
          trx,
          tenantId,
          'identity.linked',
          { type: 'user', id: userId },
          { user_id: userId, connection_id: c.id, identity_id: identityId, reason: 'user' },
        );
      });
    try {
      await attempt();
    } catch (err) {
      // Linked meanwhile (a sign-in or another tab): the second read tells whose it is.
      if (!isUniqueViolation(err)) throw err;
      await attempt();
    }
    return { kind: 'linked', userId, continuation };
  }

  async #failed(tenantId: string, c: SocialConnectionRecord | undefined, reason: SocialFailureReason, meta: RequestMeta): Promise<void> {
    // An unknown connection id is not recorded: anyone can make one up, and it names nothing.
    if (!c) return;
    await this.deps.events.transaction(this.deps.db.kysely, (trx) =>
      this.#record(trx, tenantId, 'login.social_failed', { type: 'system', id: c.id }, { connection_id: c.id, reason, ip: meta.ip }),
    );
  }

  /**
   * A connection naming a vault provider keeps the sign-in's upstream tokens as the user's
   * connected account (docs/social.md, "Tokens for the vault"), in the organization the sign-in is
   * for (`organization=` at /authorize) or else the user's only organization, and only where the
   * user is a member; otherwise they are not kept. Returns the account's id when kept.
   */
  async #keepTokens(
    trx: Executor,
    c: SocialConnectionRecord,
    userId: string,
    profile: SocialProfile,
    tokens: UpstreamTokens,
    continuation: SsoContinuation,
  ): Promise<string | null> {
    if (!c.vaultProviderId) return null;
    const r = this.#repos(trx);
    const provider = await r.connectProviders.find(c.tenantId, c.vaultProviderId);
    if (!provider) return null;
    let organizationId = continuation.organizationId ?? null;
    if (organizationId === null) {
      const memberships = await r.members.listByUser(c.tenantId, userId);
      if (memberships.length !== 1) return null;
      organizationId = memberships[0]!.organizationId;
    } else if (!(await r.members.find(c.tenantId, organizationId, userId))) {
      return null;
    }
    const account = await this.deps.vault.keepFromSignin(trx, {
      tenantId: c.tenantId,
      organizationId,
      userId,
      provider,
      tokens: { ...tokens, subject: profile.subject },
      scopes: c.scopes,
      connectionId: c.id,
    });
    return account.id;
  }

  #record(trx: Executor, tenantId: string, type: EventType, actor: Actor, data: Record<string, unknown>) {
    return this.deps.events.record(trx, { tenantId, type, organizationId: null, actor, data });
  }

  /**
   * The user of this upstream identity, in one transaction with the session and the events
   * (docs/social.md, "Accounts and linking"):
   * - a linked identity signs its user in (the connection must allow sign-in);
   * - otherwise, a user holding that email is linked only when the upstream says it verified the
   *   address, Keyhall holds it verified too, and the tenant's `account_linking` is
   *   `verified_email`; else the person must sign in with their existing method (`account_exists`);
   * - otherwise a new user (when the connection allows sign-up) with the upstream's email,
   *   `email_verified` as the upstream said, and its name.
   */
  async #signIn(
    c: SocialConnectionRecord,
    profile: SocialProfile,
    tokens: UpstreamTokens,
    continuation: SsoContinuation,
    meta: RequestMeta,
    previousToken?: string,
  ) {
    const tenantId = c.tenantId;
    const now = this.deps.clock.now();
    const system: Actor = { type: 'system', id: c.id };
    const seen = { email: profile.email, emailVerified: profile.emailVerified, name: profile.name, picture: profile.picture };
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = this.#repos(trx);
      let userId: string;
      let how: 'returning' | 'linked' | 'created';
      const identity = await r.socialIdentities.find(tenantId, c.id, profile.subject);
      if (identity) {
        if (!c.signIn) throw new SocialLoginError('connection_disabled', c);
        userId = identity.userId;
        how = 'returning';
        await r.socialIdentities.touch(tenantId, identity.id, seen, now);
      } else {
        if (profile.email === null || !profile.email.includes('@')) throw new SocialLoginError('email_missing', c);
        const email = normalizeEmail(profile.email);
        const existing = await r.users.findByEmail(tenantId, email);
        if (existing) {
          const linking = (await r.socialSettings.get(tenantId)).accountLinking;
          if (!(c.signIn && profile.emailVerified && existing.emailVerified && linking === 'verified_email')) {
            // The same person's first sign-in in another tab may have linked it meanwhile.
            if (await r.socialIdentities.find(tenantId, c.id, profile.subject)) throw new ConcurrentFirstLogin();
            throw new SocialLoginError('account_exists', c);
          }
          userId = existing.id;
          how = 'linked';
        } else {
          if (!c.signUp) throw new SocialLoginError('signup_disabled', c);
          userId = newId('user', now);
          how = 'created';
          await r.users.insert({
            id: userId,
            tenantId,
            email,
            name: profile.name,
            emailVerified: profile.emailVerified,
            passwordHash: null,
            passwordSetBy: null,
            createdAt: now,
            updatedAt: now,
          });
          await this.#record(trx, tenantId, 'user.created', system, { user_id: userId, connection_id: c.id });
        }
        const identityId = newId('idn', now);
        await r.socialIdentities.insert({
          id: identityId,
          tenantId,
          connectionId: c.id,
          subject: profile.subject,
          userId,
          ...seen,
          linkedAt: now,
          lastLoginAt: now,
        });
        await this.#record(trx, tenantId, 'identity.linked', system, {
          user_id: userId,
          connection_id: c.id,
          identity_id: identityId,
          reason: how === 'linked' ? 'verified_email' : 'sign_up',
        });
      }
      const kept = await this.#keepTokens(trx, c, userId, profile, tokens, continuation);
      const auth = await owedAfterUpstream(this.deps.mfa, tenantId, userId, {
        trustedMfa: false,
        organizationId: continuation.organizationId ?? null,
        acr: continuation.acr ?? null,
        trx,
      });
      const { session, token } = await this.deps.signin.openSession(trx, tenantId, userId, meta, now, { ...auth, idp: c.id, method: 'social' }, previousToken);
      await this.#record(
        trx,
        tenantId,
        'login.social',
        { type: 'user', id: userId },
        {
          user_id: userId,
          session_id: session.id,
          connection_id: c.id,
          ip: meta.ip,
          amr: auth.amr,
          ...(how !== 'returning' ? { [how]: true } : {}),
          ...(kept ? { connected_account_id: kept } : {}),
          ...(auth.pending ? { second_factor_pending: true } : {}),
        },
      );
      return { session, token, userId };
    });
  }
}
