/**
 * SSO sign-in (docs/sso.md): an upstream round trip bound to the browser that started it and
 * consumed once, then just-in-time provisioning — the user (verified email only), the upstream
 * identity link and the membership — and the session, all in one transaction with their events.
 */
import { pickMappedRole } from '../kernel/role-mapping.js';
import { randomBytes } from 'node:crypto';
import type { Actor, EventType } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { sha256Hex } from '../kernel/crypto/hash.js';
import { newId } from '../kernel/ids.js';
import { normalizeEmail } from '../users/emails.js';
import type { SessionRecord } from '../oauth/authorize/types.js';
import type { Acr } from '../oauth/authorize/acr.js';
import type { MfaService } from '../screens/mfa/service.js';
import type { RequestMeta, SigninService } from '../screens/service.js';
import { owedAfterUpstream } from '../signin/second-factor.js';
import { type Db, type Executor, isUniqueViolation } from '../storage/db.js';
import type { OrganizationRecord } from '../storage/repos/organizations.js';
import { repos } from '../storage/repos/index.js';
import { oidcSettings, type SsoConnectionRecord, samlSettings } from '../storage/repos/sso-connections.js';
import type { UpstreamClient } from '../upstream/client.js';
import { authorizationUrl, completeCallback, newRoundTrip, OidcCallbackError, type OidcRoundTrip } from './oidc.js';
import {
  authnRequestUrl,
  SAML_REQUEST_TTL_SECONDS,
  type SamlFailure,
  samlClaims,
  SamlResponseError,
  type SpUrls,
  spMetadata,
  validateSamlResponse,
} from './saml.js';
import { openConnectionSecret } from './secrets.js';

/** An upstream round trip must come back within this time. */
export const SSO_STATE_TTL_SECONDS = 600;

/** The reason codes of `sso.login.failed`. */
export type SsoFailureReason =
  | 'connection_unknown'
  | 'connection_disabled'
  | 'state_invalid'
  | 'browser_mismatch'
  | 'upstream_error'
  | 'token_error'
  | 'invalid_response'
  | 'email_missing'
  | 'email_unverified'
  | 'email_conflict'
  | 'administrator_link_refused'
  | 'link_session_mismatch'
  | 'identity_in_use'
  | SamlFailure;

/** The other of two simultaneous first logins of one person committed first: provision again. */
class ConcurrentFirstLogin extends Error {}

export class SsoLoginError extends Error {
  constructor(
    readonly reason: SsoFailureReason,
    readonly connection?: SsoConnectionRecord,
    /** For the log only: what the upstream or the validation said (never a token). */
    readonly detail?: string,
  ) {
    super(reason);
  }
}

/** Where the sign-in continues after the upstream: an /authorize flow, or a page of ours. */
export interface SsoContinuation {
  flow?: string;
  returnTo?: string;
  /** The flow's `organization`, whose MFA policy applies too. */
  organizationId?: string;
  /** The weakest acr the flow's acr_values accept (a passkey for `phr`). */
  acr?: Acr;
  /** An explicit link (docs/sso.md): the signed-in user who started it; no sign-in, no provisioning. */
  linkUserId?: string;
}

interface StoredTrip extends SsoContinuation {
  nonce: string;
  codeVerifier: string | null;
}

export type SsoFinish =
  | { kind: 'ok'; session: SessionRecord; token: string; userId: string; continuation: SsoContinuation }
  /** An explicit link was made (or was there already): the browser's session is unchanged. */
  | { kind: 'linked'; userId: string; continuation: SsoContinuation };

export interface SsoSigninDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  envelope: Envelope;
  upstream: UpstreamClient;
  signin: Pick<SigninService, 'openSession' | 'current'>;
  mfa: Pick<MfaService, 'secondFactorNeeded'>;
}

const stateContext = (stateHash: string) => `sso_state:${stateHash}`;
const samlRequestContext = (requestId: string) => `sso_saml_request:${requestId}`;
const samlOutcomeContext = (handleHash: string) => `sso_saml_outcome:${handleHash}`;

/** A validated SAML response waits this long at most for its browser to complete it. */
export const SAML_OUTCOME_TTL_SECONDS = 120;

/** What the ACS keeps for the completion page (sealed): the assertion's claims and where to go on. */
interface SamlOutcome {
  claims: Exclude<ReturnType<typeof samlClaims>, SamlResponseError>;
  continuation: SsoContinuation;
}

/** What the upstream said about the person, whatever the protocol. */
export interface UpstreamProfile {
  /** OIDC `sub`, SAML NameID: the identity linked to the user. */
  subject: unknown;
  email: unknown;
  /**
   * The IdP's own statement that it verified the email: OIDC `email_verified`, SAML the
   * connection's email_verified attribute; undefined when it makes none (SAML without that
   * attribute: the organization's verified domain alone decides).
   */
  emailVerified: boolean | undefined;
  name: unknown;
  groups: unknown;
  /** The IdP says the person passed more than one factor (OIDC amr/acr, SAML AuthnContextClassRef). */
  mfa: boolean;
}

/** OIDC `acr` values that state a multi-factor authentication (RFC 8176 amr `mfa` is the other way). */
const OIDC_MFA_ACRS: ReadonlySet<string> = new Set([
  'mfa',
  'phr',
  'phrh',
  'http://schemas.openid.net/pape/policies/2007/06/multi-factor',
  'https://refeds.org/profile/mfa',
  'urn:okta:loa:2fa:any',
]);

/** Whether an ID token's claims say the IdP used more than one factor. */
export function oidcStatesMfa(claims: Record<string, unknown>): boolean {
  const amr = Array.isArray(claims.amr) ? claims.amr : [];
  return amr.includes('mfa') || (typeof claims.acr === 'string' && OIDC_MFA_ACRS.has(claims.acr));
}

/** A fresh browser-binding value (the cookie that must come back with the callback). */
export const newBrowserBinding = () => randomBytes(32).toString('base64url');

/** The email's domain, lower case. */
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

/**
 * The organization owns this email's domain: its domain matches and is verified (by DNS, or by
 * an actor holding every permission: docs/sso.md, "Trust boundaries"). Only then is its IdP
 * believed about that email: that it is verified, and that it is the person of an existing
 * account.
 */
export const ownsDomain = (org: OrganizationRecord, email: string) => org.domain !== null && org.domainVerifiedAt !== null && domainOf(email) === org.domain;

function roleFor(c: SsoConnectionRecord, groups: unknown): string {
  const names = (Array.isArray(groups) ? groups : typeof groups === 'string' ? [groups] : [])
    .filter((g): g is string => typeof g === 'string')
    .map((g) => g.trim().toLowerCase());
  const mapped = new Set(names.map((g) => c.groupRoles[g]).filter((r): r is string => r !== undefined));
  return pickMappedRole(mapped) ?? c.defaultRole;
}

const str = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : undefined);

/** Where an email's sign-in goes (home-realm discovery). */
export type HomeRealm =
  /** Not an SSO domain: the password form. */
  | { kind: 'password' }
  /** The domain's organization has an enabled connection; `required`: no password sign-in. */
  | { kind: 'sso'; connectionId: string; organizationId: string; required: boolean }
  /** The organization requires SSO but has no enabled connection. */
  | { kind: 'unavailable'; organizationId: string };

export class SsoSigninService {
  constructor(private readonly deps: SsoSigninDeps) {}

  /** The organization's first enabled connection (oldest first). */
  async #enabledConnection(tenantId: string, organizationId: string): Promise<SsoConnectionRecord | undefined> {
    return (await repos(this.deps.db.kysely, this.deps.db.dialect).ssoConnections.listByOrganization(tenantId, organizationId)).find((c) => c.enabled);
  }

  /** Whether single sign-on can route anyone at all: some organization has an enabled connection. */
  async offered(tenantId: string): Promise<boolean> {
    return repos(this.deps.db.kysely, this.deps.db.dialect).ssoConnections.anyEnabled(tenantId);
  }

  /**
   * Home-realm discovery: only a VERIFIED domain routes. The organization that verified the
   * email's domain, if it has an enabled connection, signs the person in at its IdP.
   */
  async homeRealm(tenantId: string, emailInput: string): Promise<HomeRealm> {
    const email = normalizeEmail(emailInput);
    const at = email.lastIndexOf('@');
    if (at < 1 || at === email.length - 1 || email.length > 254) return { kind: 'password' };
    const org = await repos(this.deps.db.kysely, this.deps.db.dialect).organizations.findByVerifiedDomain(tenantId, domainOf(email));
    if (!org) return { kind: 'password' };
    const c = await this.#enabledConnection(tenantId, org.id);
    if (c) return { kind: 'sso', connectionId: c.id, organizationId: org.id, required: org.ssoRequired };
    return org.ssoRequired ? { kind: 'unavailable', organizationId: org.id } : { kind: 'password' };
  }

  /**
   * The connection an /authorize request names: its `connection` hint (which must belong to the
   * `organization` it also names, if any), or the one enabled connection of an `organization`
   * that requires SSO. Undefined: show the login form.
   */
  async forRequest(tenantId: string, req: { organizationId: string | null; connectionHint?: string | null }): Promise<string | undefined> {
    if (req.connectionHint) {
      const c = await repos(this.deps.db.kysely, this.deps.db.dialect).ssoConnections.findInTenant(tenantId, req.connectionHint);
      if (!c || (req.organizationId !== null && c.organizationId !== req.organizationId)) return undefined;
      return c.id;
    }
    if (req.organizationId === null) return undefined;
    const org = await repos(this.deps.db.kysely, this.deps.db.dialect).organizations.find(tenantId, req.organizationId);
    if (!org?.ssoRequired) return undefined;
    return (await this.#enabledConnection(tenantId, org.id))?.id;
  }

  redirectUri(issuer: string, connectionId: string): string {
    return `${issuer}/sso/oidc/${connectionId}/callback`;
  }

  /** The enabled connection `id` names in this tenant. */
  async connection(tenantId: string, id: string): Promise<SsoConnectionRecord> {
    const c = await repos(this.deps.db.kysely, this.deps.db.dialect).ssoConnections.findInTenant(tenantId, id);
    if (!c) throw new SsoLoginError('connection_unknown');
    if (!c.enabled) throw new SsoLoginError('connection_disabled', c);
    return c;
  }

  /**
   * Starts a round trip: a single-use state bound to `browser` (the hash of its cookie value is
   * stored), the nonce and PKCE verifier stored encrypted; returns the upstream URL.
   */
  async start(
    tenant: { id: string; issuer: string },
    connectionId: string,
    browser: string,
    continuation: SsoContinuation,
    loginHint?: string,
  ): Promise<string> {
    const c = await this.connection(tenant.id, connectionId);
    if (c.protocol === 'saml') return this.#startSaml(tenant, c, browser, continuation);
    const config = oidcSettings(c);
    const trip = newRoundTrip(config);
    const now = this.deps.clock.now();
    const stateHash = sha256Hex(trip.state);
    const stored: StoredTrip = { nonce: trip.nonce, codeVerifier: trip.codeVerifier, ...continuation };
    await repos(this.deps.db.kysely, this.deps.db.dialect).upstreamRoundTrips.insert({
      stateHash,
      tenantId: tenant.id,
      purpose: 'sso',
      upstreamId: c.id,
      browserHash: sha256Hex(browser),
      secretsEnc: this.deps.envelope.encrypt(JSON.stringify(stored), stateContext(stateHash)),
      resume: null,
      createdAt: now,
      expiresAt: now + SSO_STATE_TTL_SECONDS * 1000,
      consumedAt: null,
    });
    return authorizationUrl(config, this.deps.upstream, this.redirectUri(tenant.issuer, c.id), trip, loginHint);
  }

  /** The SP URLs of a SAML connection: its ACS and its entity id (the audience). */
  samlSp(issuer: string, c: SsoConnectionRecord): SpUrls {
    return { acsUrl: `${issuer}/sso/saml/${c.id}/acs`, entityId: samlSettings(c).spEntityId ?? `${issuer}/sso/saml/${c.id}/metadata` };
  }

  /** The SP metadata of a SAML connection of this tenant (enabled or not: it is set up at the IdP first). */
  async samlMetadata(tenant: { id: string; issuer: string }, connectionId: string): Promise<string | undefined> {
    const c = await repos(this.deps.db.kysely, this.deps.db.dialect).ssoConnections.findInTenant(tenant.id, connectionId);
    if (!c || c.protocol !== 'saml') return undefined;
    return spMetadata(samlSettings(c), this.samlSp(tenant.issuer, c));
  }

  /**
   * A SAML AuthnRequest (HTTP-Redirect): its ID is stored with the continuation (sealed) and the
   * hash of `browser` (the cookie that must come back on the completion page), for the IdP's
   * answer to name in InResponseTo, once, within SAML_REQUEST_TTL_SECONDS.
   */
  async #startSaml(tenant: { id: string; issuer: string }, c: SsoConnectionRecord, browser: string, continuation: SsoContinuation): Promise<string> {
    const now = this.deps.clock.now();
    return authnRequestUrl(samlSettings(c), this.samlSp(tenant.issuer, c), (requestId) =>
      repos(this.deps.db.kysely, this.deps.db.dialect).ssoSaml.insertRequest({
        requestId,
        tenantId: tenant.id,
        connectionId: c.id,
        browserHash: sha256Hex(browser),
        continuationEnc: this.deps.envelope.encrypt(JSON.stringify(continuation), samlRequestContext(requestId)),
        createdAt: now,
        expiresAt: now + SAML_REQUEST_TTL_SECONDS * 1000,
        consumedAt: null,
      }),
    );
  }

  /**
   * The SAML ACS: the response is validated (saml.ts: size, no DTD, replay, the live request it
   * answers, signature, audience, issuer, recipient, time window), then the request is consumed
   * and the assertion id recorded (each consume-once, so every instance agrees). No session yet:
   * the IdP's post is cross-site and carries no browser cookie, so the outcome is kept sealed for
   * SAML_OUTCOME_TTL_SECONDS under a new one-time handle (its hash stored, with the request's
   * browser hash) and the handle is returned for the same-site completion page (completeSaml).
   * Throws SsoLoginError (already audited).
   */
  async acceptSaml(tenant: { id: string; issuer: string }, connectionId: string, samlResponse: string | undefined, meta: RequestMeta): Promise<string> {
    return this.#finishing(tenant.id, connectionId, 'saml', meta, async (conn) => {
      const settings = samlSettings(conn);
      if (!samlResponse) throw new SsoLoginError('invalid_response', conn, 'no SAMLResponse');
      const r = repos(this.deps.db.kysely, this.deps.db.dialect).ssoSaml;
      const now = this.deps.clock.now();
      let assertion;
      try {
        assertion = await validateSamlResponse({
          settings,
          sp: this.samlSp(tenant.issuer, conn),
          samlResponse,
          now,
          liveRequest: (id) => r.liveRequest(tenant.id, conn.id, id, now),
          assertionSeen: (id) => r.assertionSeen(conn.id, sha256Hex(id), now),
        });
      } catch (err) {
        if (err instanceof SamlResponseError) throw new SsoLoginError(err.reason, conn, err.detail);
        throw err;
      }
      const claims = samlClaims(settings, assertion);
      if (claims instanceof SamlResponseError) throw new SsoLoginError(claims.reason, conn, claims.detail);
      // Every check passed: the request is used up (of two parallel answers, one wins), and the
      // assertion id recorded until it expires (a replay is refused on every instance).
      const request = await r.consumeRequest(tenant.id, conn.id, assertion.requestId, now);
      if (!request) throw new SsoLoginError('request_unknown', conn, 'the request was answered already');
      if (!(await r.useAssertion(tenant.id, conn.id, sha256Hex(assertion.assertionId), assertion.assertionExpiresAt, now))) {
        throw new SsoLoginError('assertion_replayed', conn, 'this assertion was already used');
      }
      const continuation = JSON.parse(this.deps.envelope.decrypt(request.continuationEnc, samlRequestContext(request.requestId))) as SsoContinuation;
      const outcome: SamlOutcome = { claims, continuation };
      const handle = randomBytes(32).toString('base64url');
      const handleHash = sha256Hex(handle);
      await r.insertOutcome({
        handleHash,
        tenantId: tenant.id,
        connectionId: conn.id,
        browserHash: request.browserHash,
        outcomeEnc: this.deps.envelope.encrypt(JSON.stringify(outcome), samlOutcomeContext(handleHash)),
        createdAt: now,
        expiresAt: now + SAML_OUTCOME_TTL_SECONDS * 1000,
        consumedAt: null,
      });
      return handle;
    });
  }

  /**
   * The SAML completion page (a same-site top-level GET, so the browser's SameSite=Lax cookie
   * comes along): the outcome `handle` names is consumed only by the browser whose cookie sent
   * the request it answers; then the user is found or provisioned and a session opened, as for
   * OIDC. Another browser gets `browser_mismatch` and the outcome is burned: nobody completes it
   * afterwards (docs/sso.md). Throws SsoLoginError (already audited).
   */
  async completeSaml(
    tenant: { id: string; issuer: string },
    connectionId: string,
    handle: string | undefined,
    browser: string | undefined,
    meta: RequestMeta,
    previousToken?: string,
  ): Promise<SsoFinish> {
    return this.#finishing(tenant.id, connectionId, 'saml', meta, async (conn) => {
      if (!handle || handle.length > 200) throw new SsoLoginError('state_invalid', conn);
      const r = repos(this.deps.db.kysely, this.deps.db.dialect).ssoSaml;
      const now = this.deps.clock.now();
      const handleHash = sha256Hex(handle);
      const row = await r.findOutcome(tenant.id, handleHash);
      if (!row || row.connectionId !== conn.id || row.consumedAt !== null || row.expiresAt <= now) throw new SsoLoginError('state_invalid', conn);
      if (!browser || sha256Hex(browser) !== row.browserHash) {
        await r.burnOutcome(tenant.id, handleHash, now);
        throw new SsoLoginError('browser_mismatch', conn);
      }
      if (!(await r.consumeOutcome(tenant.id, handleHash, row.browserHash, now))) throw new SsoLoginError('state_invalid', conn);
      const { claims, continuation } = JSON.parse(this.deps.envelope.decrypt(row.outcomeEnc, samlOutcomeContext(handleHash))) as SamlOutcome;
      if (continuation.linkUserId !== undefined) return this.#link(tenant.id, conn, claims, continuation, previousToken);
      const { session, token, userId } = await this.#provisionOnce(tenant.id, conn, claims, continuation, meta, previousToken);
      return { kind: 'ok', session, token, userId, continuation };
    });
  }

  /** Consumes the round trip `state` names, only for the browser that started it. */
  async #consume(
    tenantId: string,
    connectionId: string,
    state: string | null,
    browser: string | undefined,
  ): Promise<{ trip: OidcRoundTrip; stored: StoredTrip }> {
    if (!state || state.length > 200) throw new SsoLoginError('state_invalid');
    const r = repos(this.deps.db.kysely, this.deps.db.dialect).upstreamRoundTrips;
    const stateHash = sha256Hex(state);
    const row = await r.find(tenantId, 'sso', stateHash);
    if (!row || row.upstreamId !== connectionId) throw new SsoLoginError('state_invalid');
    if (!browser || sha256Hex(browser) !== row.browserHash) throw new SsoLoginError('browser_mismatch');
    if (!(await r.consume(row, this.deps.clock.now()))) throw new SsoLoginError('state_invalid');
    const stored = JSON.parse(this.deps.envelope.decrypt(row.secretsEnc, stateContext(stateHash))) as StoredTrip;
    return { trip: { state, nonce: stored.nonce, codeVerifier: stored.codeVerifier }, stored };
  }

  /**
   * The OIDC callback: the state is consumed (single use, this browser only), the code exchanged
   * and the ID token validated (src/upstream/), then the user is found or provisioned and a
   * session opened. Throws SsoLoginError (already audited as `sso.login.failed`).
   */
  async finishOidc(
    tenant: { id: string; issuer: string },
    connectionId: string,
    callbackUrl: URL,
    browser: string | undefined,
    meta: RequestMeta,
    previousToken?: string,
  ): Promise<SsoFinish> {
    return this.#finishing(tenant.id, connectionId, 'oidc', meta, async (c) => {
      const config = oidcSettings(c);
      const { trip, stored } = await this.#consume(tenant.id, c.id, callbackUrl.searchParams.get('state'), browser);
      const secret = c.secretEnc === null ? null : openConnectionSecret(this.deps.envelope, tenant.id, c.id, c.secretEnc);
      let claims: Record<string, unknown>;
      try {
        claims = await completeCallback(config, secret, this.deps.upstream, callbackUrl.searchParams, this.redirectUri(tenant.issuer, c.id), trip);
      } catch (err) {
        if (err instanceof OidcCallbackError) throw new SsoLoginError(err.reason, c, err.detail);
        throw err;
      }
      const profile: UpstreamProfile = {
        subject: claims.sub,
        email: claims[config.claims.email],
        emailVerified: claims.email_verified === true,
        name: claims[config.claims.name],
        groups: claims[config.claims.groups],
        mfa: oidcStatesMfa(claims),
      };
      const continuation: SsoContinuation = { flow: stored.flow, returnTo: stored.returnTo, organizationId: stored.organizationId, acr: stored.acr };
      if (stored.linkUserId !== undefined) return this.#link(tenant.id, c, profile, { ...continuation, linkUserId: stored.linkUserId }, previousToken);
      const { session, token, userId } = await this.#provisionOnce(tenant.id, c, profile, continuation, meta, previousToken);
      return { kind: 'ok', session, token, userId, continuation };
    });
  }

  /**
   * A login's finish at a connection of `protocol`: an SsoLoginError on the way is audited as
   * `sso.login.failed` (when the connection is known) and rethrown.
   */
  async #finishing<T>(
    tenantId: string,
    connectionId: string,
    protocol: SsoConnectionRecord['protocol'],
    meta: RequestMeta,
    finish: (c: SsoConnectionRecord) => Promise<T>,
  ): Promise<T> {
    let c: SsoConnectionRecord | undefined;
    try {
      c = await this.connection(tenantId, connectionId);
      if (c.protocol !== protocol) throw new SsoLoginError('connection_unknown');
      return await finish(c);
    } catch (err) {
      if (err instanceof SsoLoginError) await this.#failed(tenantId, err.connection ?? c, connectionId, err.reason, meta);
      throw err;
    }
  }

  async #failed(tenantId: string, c: SsoConnectionRecord | undefined, connectionId: string, reason: SsoFailureReason, meta: RequestMeta): Promise<void> {
    // An unknown connection id is not recorded: anyone can make one up, and it names nothing.
    if (!c) return;
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      await this.#record(trx, tenantId, c, 'sso.login.failed', { type: 'system', id: connectionId }, { connection_id: c.id, reason, ip: meta.ip });
    });
  }

  #record(trx: Executor, tenantId: string, c: SsoConnectionRecord, type: EventType, actor: Actor, data: Record<string, unknown>) {
    return this.deps.events.record(trx, { tenantId, type, organizationId: c.organizationId, actor, data });
  }

  /**
   * The finish of an explicit link (docs/sso.md, "Linking an account explicitly"): the browser's
   * usable session must still be the user who started it (`link_session_mismatch`), and the
   * upstream identity must not be another user's (`identity_in_use`). Then it is linked to that
   * user, whatever the emails say (the user proved both sides), with `sso.identity.linked`. No
   * session is opened or changed, no membership added.
   */
  async #link(
    tenantId: string,
    c: SsoConnectionRecord,
    claims: UpstreamProfile,
    continuation: SsoContinuation,
    sessionToken: string | undefined,
  ): Promise<SsoFinish> {
    const userId = continuation.linkUserId!;
    const subject = str(claims.subject, 255);
    if (!subject) throw new SsoLoginError('invalid_response', c);
    const current = await this.deps.signin.current(tenantId, sessionToken);
    if (current?.userId !== userId) throw new SsoLoginError('link_session_mismatch', c);
    const linked: SsoFinish = { kind: 'linked', userId, continuation };
    const now = this.deps.clock.now();
    const attempt = () =>
      this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
        const r = repos(trx, this.deps.db.dialect);
        const identity = await r.ssoIdentities.find(c.id, subject);
        if (identity && identity.userId !== userId) throw new SsoLoginError('identity_in_use', c);
        if (identity) return;
        await r.ssoIdentities.insert({ connectionId: c.id, subject, tenantId, userId, createdAt: now, lastLoginAt: now });
        await this.#record(trx, tenantId, c, 'sso.identity.linked', { type: 'user', id: userId }, { user_id: userId, connection_id: c.id });
      });
    try {
      await attempt();
    } catch (err) {
      // Linked meanwhile (by a sign-in or another tab): the second read tells whose it is.
      if (!isUniqueViolation(err)) throw err;
      await attempt();
    }
    return linked;
  }

  /**
   * Two first logins of one person at once both try to create the user or the link: the loser's
   * transaction fails on the unique key and is run again, and then finds what the winner made.
   */
  async #provisionOnce(
    tenantId: string,
    c: SsoConnectionRecord,
    claims: UpstreamProfile,
    continuation: SsoContinuation,
    meta: RequestMeta,
    previousToken?: string,
  ) {
    try {
      return await this.#provision(tenantId, c, claims, continuation, meta, previousToken);
    } catch (err) {
      if (!isUniqueViolation(err) && !(err instanceof ConcurrentFirstLogin)) throw err;
      return this.#provision(tenantId, c, claims, continuation, meta, previousToken);
    }
  }

  /**
   * Just-in-time provisioning, in one transaction with the session and every event
   * (docs/sso.md, "Trust boundaries"):
   * - a known upstream identity signs its user in (the name follows the IdP);
   * - otherwise the email is checked: it counts as verified only when the organization owns its
   *   domain (verified) and the IdP does not deny verifying it;
   * - an existing user with that email is linked only when that holds, or when one of the
   *   organization's directory (SCIM) connections created that account — never a tenant
   *   administrator (they sign in with their own method) and never a second account;
   * - a new user is created with that email, `email_verified` as above, and no password;
   * - a user who is not a member becomes one, with the role mapped from groups or the default;
   * - the session owes Keyhall's second factor unless a trusted IdP stated MFA (the sign-in
   *   engine's rule, owedAfterUpstream in src/signin/second-factor.ts).
   */
  async #provision(
    tenantId: string,
    c: SsoConnectionRecord,
    claims: UpstreamProfile,
    continuation: SsoContinuation,
    meta: RequestMeta,
    previousToken?: string,
  ) {
    const now = this.deps.clock.now();
    const subject = str(claims.subject, 255);
    if (!subject) throw new SsoLoginError('invalid_response', c);
    const system: Actor = { type: 'system', id: c.id };
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = repos(trx, this.deps.db.dialect);
      const org = await r.organizations.findShared(tenantId, c.organizationId, this.deps.db.dialect);
      if (!org) throw new SsoLoginError('connection_unknown', c);
      const name = str(claims.name, 200) ?? null;
      let userId: string;
      const identity = await r.ssoIdentities.find(c.id, subject);
      if (identity) {
        userId = identity.userId;
        await r.ssoIdentities.touch(c.id, subject, now);
        const user = await r.users.find(tenantId, userId);
        if (user && name !== null && user.name !== name) {
          await r.users.update(tenantId, userId, { name }, now);
          await this.#record(trx, tenantId, c, 'user.updated', system, { user_id: userId, fields: ['name'] });
        }
      } else {
        const raw = str(claims.email, 254);
        if (!raw || !raw.includes('@')) throw new SsoLoginError('email_missing', c);
        const email = normalizeEmail(raw);
        const verified = ownsDomain(org, email) && claims.emailVerified !== false;
        const existing = await r.users.findByEmail(tenantId, email);
        if (existing) {
          // A simultaneous first login of this same person may have committed the user and its
          // identity between the two reads above (READ COMMITTED): run again, it finds the identity.
          const raced = async () => (await r.ssoIdentities.find(c.id, subject))?.userId === existing.id;
          if (await r.tenantAdmins.isAdmin(tenantId, existing.id)) {
            if (await raced()) throw new ConcurrentFirstLogin();
            throw new SsoLoginError('administrator_link_refused', c);
          }
          if (!verified && !(await r.directoryUsers.createdUser(tenantId, org.id, existing.id))) {
            if (await raced()) throw new ConcurrentFirstLogin();
            throw new SsoLoginError(ownsDomain(org, email) ? 'email_unverified' : 'email_conflict', c);
          }
          userId = existing.id;
        } else {
          userId = newId('user', now);
          await r.users.insert({
            id: userId,
            tenantId,
            email,
            name,
            emailVerified: verified,
            passwordHash: null,
            passwordSetBy: null,
            createdAt: now,
            updatedAt: now,
          });
          await this.#record(trx, tenantId, c, 'user.created', system, { user_id: userId });
        }
        await r.ssoIdentities.insert({ connectionId: c.id, subject, tenantId, userId, createdAt: now, lastLoginAt: now });
      }
      if (!(await r.members.find(tenantId, org.id, userId))) {
        // A role deleted since the connection named it: the tenant's default role instead.
        const mappedRole = roleFor(c, claims.groups);
        const role = (await r.roles.usableIn(tenantId, org.id)).has(mappedRole) ? mappedRole : await r.roles.defaultRole(tenantId);
        await r.members.insert({ tenantId, organizationId: org.id, userId, role, createdAt: now, updatedAt: now });
        await this.#record(trx, tenantId, c, 'member.added', system, { organization_id: org.id, user_id: userId, role, connection_id: c.id });
      }
      const auth = await owedAfterUpstream(this.deps.mfa, tenantId, userId, {
        trustedMfa: c.trustIdpMfa && claims.mfa,
        organizationId: continuation.organizationId ?? c.organizationId,
        acr: continuation.acr ?? null,
        trx,
      });
      const { session, token } = await this.deps.signin.openSession(trx, tenantId, userId, meta, now, { ...auth, method: 'sso' }, previousToken);
      await this.#record(
        trx,
        tenantId,
        c,
        'sso.login.succeeded',
        { type: 'user', id: userId },
        {
          user_id: userId,
          session_id: session.id,
          connection_id: c.id,
          ip: meta.ip,
          amr: auth.amr,
          ...(auth.pending ? { second_factor_pending: true } : {}),
        },
      );
      return { session, token, userId };
    });
  }
}
