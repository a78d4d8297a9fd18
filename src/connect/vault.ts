/**
 * The connected-accounts vault: the hosted connect flow (state + PKCE upstream, the callback's
 * checks), encrypted token storage, retrieval of a live access token (refreshed once across all
 * instances when near expiry), and listing and removal. Framework-free: /v1, the /connect screens
 * and /mcp call it with the caller as a value (VaultCaller), and every retrieval, success or
 * failure, is audited with that caller.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Actor, EventType } from '../events/catalogue.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { sha256Hex } from '../kernel/crypto/hash.js';
import { errors } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { Db, Executor } from '../storage/db.js';
import type { AccountFilter, ConnectedAccountRecord, ConnectProviderRecord } from '../storage/repos/connect.js';
import { repos } from '../storage/repos/index.js';
import { callbackUri } from './providers.js';
import { openClientSecret, openToken, openVerifier, sealToken, sealVerifier } from './secrets.js';
import { newRoundTrip, type UpstreamClient, UpstreamError, type UpstreamTokens } from '../upstream/client.js';
import { readProfile } from '../upstream/profile.js';

/**
 * Who asks for a token: an API key (/v1), or an OAuth client acting for a user, with the RFC
 * 8693 `act` chain of the access token it presented (/mcp).
 */
export type VaultCaller =
  { type: 'api_key'; keyId: string } | { type: 'oauth_client'; clientId: string; userId: string | null; act: Record<string, unknown> | null };

/** What a connect round trip resumes with (stored in clear: nothing in it is secret). */
interface ConnectResume {
  userId: string;
  organizationId: string;
  scopes: string[];
}

/** A user's membership of an organization. */
export interface Membership {
  tenantId: string;
  organizationId: string;
  userId: string;
}

/** What the services that end memberships need of the vault. */
export type MembershipVault = Pick<VaultService, 'endMembership'>;

export interface VaultToken {
  accessToken: string;
  /** Epoch seconds, or null when the upstream gave the token no lifetime. */
  expiresAt: number | null;
  scopes: string[];
}

export interface VaultSettings {
  /** A token expiring within this is refreshed before it is returned. */
  refreshSkewMs: number;
  /** How long a retrieval waits for another caller's refresh (real time). */
  waitMs: number;
  /** How long a refresh claim holds (a crashed refresher's claim lapses after it). */
  leaseMs: number;
  /** How long a connect flow's `state` stays usable. */
  flowTtlMs: number;
}

export interface VaultDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  envelope: Envelope;
  upstream: UpstreamClient;
  settings: VaultSettings;
  /** Told of failed best-effort upstream revocations (the log). */
  onRevokeFailed?: (accountId: string, err: unknown) => void;
}

/** Tokens to revoke upstream with their RFC 7009 hints, the refresh token first. */
type RevocableTokens = Array<[string, 'refresh_token' | 'access_token']>;

const POLL_MS = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const actorOf = (c: VaultCaller): Actor => (c.type === 'api_key' ? { type: 'api_key', id: c.keyId } : { type: 'oauth_client', id: c.clientId });
const callerData = (c: VaultCaller) =>
  c.type === 'api_key' ? { type: 'api_key', api_key_id: c.keyId } : { type: 'oauth_client', client_id: c.clientId, user_id: c.userId, act: c.act };

export function accountView(a: ConnectedAccountRecord) {
  return {
    account_id: a.id,
    organization_id: a.organizationId,
    user_id: a.userId,
    provider_id: a.providerId,
    subject: a.subject,
    scopes: a.scopes,
    status: a.status,
    expires_at: a.expiresAt === null ? null : Math.floor(a.expiresAt / 1000),
    last_refreshed_at: a.lastRefreshedAt === null ? null : new Date(a.lastRefreshedAt).toISOString(),
    created_at: new Date(a.createdAt).toISOString(),
    updated_at: new Date(a.updatedAt).toISOString(),
  };
}

export class VaultService {
  constructor(private readonly deps: VaultDeps) {}

  #repos(trx?: Executor) {
    return repos(trx ?? this.deps.db.kysely, this.deps.db.dialect);
  }

  #tx<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.deps.events.transaction(this.deps.db.kysely, fn);
  }

  #record(trx: Executor, tenantId: string, type: EventType, organizationId: string | null, actor: Actor, data: Record<string, unknown>) {
    return this.deps.events.record(trx, { tenantId, type, organizationId, actor, data });
  }

  // ---- connecting (hosted /connect screens) ----

  async provider(tenantId: string, providerId: string): Promise<ConnectProviderRecord | undefined> {
    return this.#repos().connectProviders.find(tenantId, providerId);
  }

  listProviders(tenantId: string): Promise<ConnectProviderRecord[]> {
    return this.#repos().connectProviders.list(tenantId, { limit: 100 });
  }

  /** The organizations a user may connect an account for (their memberships). */
  async organizationsOf(tenantId: string, userId: string): Promise<Array<{ id: string; name: string }>> {
    const r = this.#repos();
    const out: Array<{ id: string; name: string }> = [];
    for (const m of await r.members.listByUser(tenantId, userId)) {
      const org = await r.organizations.find(tenantId, m.organizationId);
      if (org) out.push({ id: org.id, name: org.name });
    }
    return out;
  }

  /**
   * Starts a connection: a flow bound to {tenant, provider, user, browser session}, and the
   * upstream authorization URL carrying its `state` and PKCE challenge.
   */
  async startConnect(
    tenant: { id: string; issuer: string },
    session: { id: string; userId: string },
    providerId: string,
    organizationId: string,
  ): Promise<string> {
    const provider = await this.provider(tenant.id, providerId);
    if (!provider) throw errors.notFound('This connection provider does not exist.');
    if (!(await this.#repos().members.find(tenant.id, organizationId, session.userId))) {
      throw errors.invalidRequest('Choose an organization you are a member of.');
    }
    const now = this.deps.clock.now();
    const trip = newRoundTrip({ pkce: provider.pkce, nonce: false });
    const stateHash = sha256Hex(trip.state);
    await this.#repos().upstreamRoundTrips.insert<ConnectResume>({
      stateHash,
      tenantId: tenant.id,
      purpose: 'connect',
      upstreamId: providerId,
      browserHash: sha256Hex(session.id),
      secretsEnc: sealVerifier(this.deps.envelope, tenant.id, stateHash, trip.codeVerifier ?? ''),
      resume: { userId: session.userId, organizationId, scopes: provider.scopes },
      expiresAt: now + this.deps.settings.flowTtlMs,
      consumedAt: null,
      createdAt: now,
    });
    return this.deps.upstream.authorizationUrl(provider, {
      redirectUri: callbackUri(tenant.issuer, providerId),
      scopes: provider.scopes,
      trip,
      params: provider.authorizeParams,
    });
  }

  /**
   * The upstream's answer at /connect/{providerId}/callback. Refused (400, nothing consumed): a
   * missing or unknown `state`, one minted for another provider, or for another user or browser
   * session. Then the flow is consumed once (a replay is refused), and an upstream `error`, a
   * missing code, an `iss` that is not the provider's (RFC 9207) or a refused code end it.
   */
  async completeConnect(
    tenant: { id: string; issuer: string },
    session: { id: string; userId: string } | undefined,
    providerId: string,
    params: URLSearchParams,
  ): Promise<ConnectedAccountRecord> {
    const state = params.get('state');
    if (!state) throw errors.invalidRequest('The answer from the provider has no state. Start connecting again.');
    const stateHash = sha256Hex(state);
    const r = this.#repos();
    const trip = await r.upstreamRoundTrips.find<ConnectResume>(tenant.id, 'connect', stateHash);
    const now = this.deps.clock.now();
    if (!trip?.resume || trip.expiresAt <= now) throw errors.invalidRequest('This connection attempt has expired or is unknown. Start connecting again.');
    if (trip.upstreamId !== providerId) throw errors.invalidRequest('This answer belongs to a connection with another provider.');
    const flow = trip.resume;
    if (!session || sha256Hex(session.id) !== trip.browserHash || session.userId !== flow.userId) {
      throw errors.invalidRequest('This connection was started in another browser session. Start connecting again from this browser.');
    }
    if (!(await r.upstreamRoundTrips.consume(trip, now))) throw errors.invalidRequest('This connection answer was already used. Start connecting again.');
    const upstreamError = params.get('error');
    if (upstreamError !== null) {
      const description = params.get('error_description');
      throw errors.invalidRequest(
        `The provider refused the connection: ${upstreamError.slice(0, 100)}${description ? ` (${description.slice(0, 200)})` : ''}.`,
      );
    }
    if (!params.get('code')) throw errors.invalidRequest('The answer from the provider has no authorization code.');
    const provider = await r.connectProviders.find(tenant.id, providerId);
    if (!provider) throw errors.notFound('This connection provider no longer exists.');
    let tokens;
    try {
      tokens = await this.deps.upstream.exchangeCode(provider, openClientSecret(this.deps.envelope, provider), params, {
        redirectUri: callbackUri(tenant.issuer, providerId),
        // The verifier only when the provider takes PKCE (an empty one: none was made).
        trip: { state, nonce: null, codeVerifier: (provider.pkce && openVerifier(this.deps.envelope, trip)) || null },
      });
      tokens = { ...tokens, subject: await this.upstreamSubject(provider, tokens) };
    } catch (err) {
      if (err instanceof UpstreamError && err.kind === 'invalid_callback') {
        throw errors.invalidRequest(`The answer from the provider failed its checks: ${err.message}. Start connecting again.`).because(err);
      }
      if (err instanceof UpstreamError) throw errors.upstreamError(`The provider's answer could not be used: ${err.message}.`).because(err);
      throw err;
    }
    return this.#tx(async (trx) => {
      if (!(await this.#repos(trx).members.find(tenant.id, flow.organizationId, flow.userId)))
        throw errors.invalidRequest('You are no longer a member of that organization.');
      return this.#store(trx, tenant.id, flow, providerId, tokens, {});
    });
  }

  /** Stores a connect's tokens: the account of the same user, organization, provider and subject gets them, or a new one. */
  async #store(
    trx: Executor,
    tenantId: string,
    flow: ConnectResume,
    providerId: string,
    tokens: UpstreamTokens,
    extra: Record<string, unknown>,
  ): Promise<ConnectedAccountRecord> {
    const t = this.#repos(trx);
    const at = this.deps.clock.now();
    const existing = await t.connectedAccounts.findExisting(tenantId, flow.organizationId, flow.userId, providerId, tokens.subject);
    const id = existing?.id ?? newId('acct', at);
    const stored = {
      accessTokenEnc: sealToken(this.deps.envelope, tenantId, id, 'access', tokens.accessToken),
      refreshTokenEnc: tokens.refreshToken === null ? null : sealToken(this.deps.envelope, tenantId, id, 'refresh', tokens.refreshToken),
      expiresAt: tokens.expiresIn === null ? null : at + tokens.expiresIn * 1000,
      scopes: tokens.scopes ?? flow.scopes,
    };
    let account: ConnectedAccountRecord;
    if (existing) {
      await t.connectedAccounts.replaceTokens(tenantId, id, stored, at);
      account = { ...existing, ...stored, status: 'active', version: existing.version + 1, refreshOwner: null, refreshUntil: null, updatedAt: at };
    } else {
      account = {
        id,
        tenantId,
        organizationId: flow.organizationId,
        userId: flow.userId,
        providerId,
        subject: tokens.subject,
        ...stored,
        status: 'active',
        version: 1,
        refreshOwner: null,
        refreshUntil: null,
        lastRefreshedAt: null,
        createdAt: at,
        updatedAt: at,
      };
      await t.connectedAccounts.insert(account);
    }
    await this.#record(
      trx,
      tenantId,
      'connected_account.connected',
      flow.organizationId,
      { type: 'user', id: flow.userId },
      {
        account_id: id,
        provider_id: providerId,
        user_id: flow.userId,
        subject: tokens.subject,
        scopes: stored.scopes,
        reconnected: existing !== undefined,
        ...extra,
      },
    );
    return account;
  }

  /**
   * Who the upstream account is: the ID token's `sub`, else, for a generic OAuth 2.0 provider
   * that declares one, the field of its userinfo document (a number read as its decimal text);
   * null when the provider names nobody (then one account per user and provider).
   */
  async upstreamSubject(provider: ConnectProviderRecord, tokens: UpstreamTokens): Promise<string | null> {
    if (tokens.subject !== null || !provider.userinfoEndpoint || !provider.subjectField) return tokens.subject;
    const doc = await this.deps.upstream.userinfo(provider, tokens.accessToken);
    const subject = readProfile(doc, { subject: provider.subjectField }).subject;
    if (subject === null) throw new UpstreamError('invalid_response', `the userinfo document has no ${provider.subjectField}`);
    return subject;
  }

  /**
   * Keeps tokens a social sign-in received (docs/social.md, "Tokens for the vault") as the user's
   * connected account in `organizationId`, inside the sign-in's transaction: the account of the
   * same upstream subject is given the new tokens, or a new one is made. The caller checked the
   * membership.
   */
  async keepFromSignin(
    trx: Executor,
    k: {
      tenantId: string;
      organizationId: string;
      userId: string;
      provider: ConnectProviderRecord;
      tokens: UpstreamTokens;
      scopes: string[];
      connectionId: string;
    },
  ): Promise<ConnectedAccountRecord> {
    return this.#store(trx, k.tenantId, { organizationId: k.organizationId, userId: k.userId, scopes: k.scopes }, k.provider.id, k.tokens, {
      connection_id: k.connectionId,
    });
  }

  listForUser(tenantId: string, userId: string): Promise<ConnectedAccountRecord[]> {
    return this.#repos().connectedAccounts.list(tenantId, { userId, limit: 100 });
  }

  /** A user disconnects one of their own accounts (another user's is not found). */
  async disconnectOwn(tenantId: string, userId: string, accountId: string): Promise<void> {
    const account = await this.#repos().connectedAccounts.find(tenantId, accountId);
    if (!account || account.userId !== userId) throw errors.notFound('This connected account does not exist.');
    await this.#remove(account, { type: 'user', id: userId });
  }

  // ---- administration (/v1) ----

  list(tenantId: string, organizationId: string, f: Omit<AccountFilter, 'organizationId'>): Promise<ConnectedAccountRecord[]> {
    return this.#repos().connectedAccounts.list(tenantId, { ...f, organizationId });
  }

  async get(tenantId: string, organizationId: string, accountId: string): Promise<ConnectedAccountRecord> {
    const account = await this.#repos().connectedAccounts.find(tenantId, accountId);
    if (!account || account.organizationId !== organizationId) throw errors.accountNotFound();
    return account;
  }

  async remove(tenantId: string, organizationId: string, accountId: string, actor: Actor): Promise<void> {
    await this.#remove(await this.get(tenantId, organizationId, accountId), actor);
  }

  /** Deletes the account with its event; its tokens are revoked upstream once that commits. */
  async #remove(account: ConnectedAccountRecord, actor: Actor): Promise<void> {
    await this.#tx(async (trx) => {
      if (!(await this.#repos(trx).connectedAccounts.delete(account.tenantId, account.id))) throw errors.accountNotFound();
      await this.#disconnected(trx, account, actor, 'removed');
    });
  }

  /**
   * A membership ended (DELETE …/members/{user}, a SCIM deactivation or deletion, the user's
   * deletion): inside the caller's transaction, the user's accounts in that organization are
   * deleted, each with `connected_account.disconnected` (`reason: membership_ended`); their
   * tokens are revoked upstream once that transaction has committed.
   */
  async endMembership(trx: Executor, m: Membership, actor: Actor): Promise<void> {
    for (const account of await this.#repos(trx).connectedAccounts.deleteForMember(m.tenantId, m.organizationId, m.userId)) {
      await this.#disconnected(trx, account, actor, 'membership_ended');
    }
  }

  /**
   * The event of a deleted account, and the revocation of its tokens at the provider's RFC 7009
   * endpoint after the commit: best effort, so an unreachable upstream cannot keep an account
   * the user or administrator removed (a failure is logged).
   */
  async #disconnected(trx: Executor, account: ConnectedAccountRecord, actor: Actor, reason: 'removed' | 'membership_ended'): Promise<void> {
    const provider = await this.#repos(trx).connectProviders.find(account.tenantId, account.providerId);
    await this.#record(trx, account.tenantId, 'connected_account.disconnected', account.organizationId, actor, {
      account_id: account.id,
      provider_id: account.providerId,
      user_id: account.userId,
      reason,
      upstream_revocation: provider?.revocationEndpoint ? 'attempted' : 'unsupported',
    });
    if (!provider?.revocationEndpoint) return;
    this.deps.events.afterCommit(trx, () =>
      this.#revokeUpstream(account.id, provider, () => {
        const tokens: RevocableTokens = [];
        if (account.refreshTokenEnc)
          tokens.push([openToken(this.deps.envelope, account.tenantId, account.id, 'refresh', account.refreshTokenEnc), 'refresh_token']);
        tokens.push([openToken(this.deps.envelope, account.tenantId, account.id, 'access', account.accessTokenEnc), 'access_token']);
        return tokens;
      }),
    );
  }

  /**
   * RFC 7009 revocation of each token, best effort: a failure (to reach the upstream, or even to
   * open a stored token) goes to onRevokeFailed, the log, and never undoes the removal.
   */
  async #revokeUpstream(accountId: string, provider: ConnectProviderRecord, tokens: () => RevocableTokens): Promise<void> {
    if (!provider.revocationEndpoint) return;
    try {
      const secret = openClientSecret(this.deps.envelope, provider);
      for (const [token, hint] of tokens()) {
        try {
          await this.deps.upstream.revoke(provider, secret, token, hint);
        } catch (err) {
          this.deps.onRevokeFailed?.(accountId, err);
        }
      }
    } catch (err) {
      this.deps.onRevokeFailed?.(accountId, err);
    }
  }

  // ---- retrieval ----

  /** Usable as stored: no lifetime, not within the skew of expiry, or live with nothing to refresh it with. */
  #usable(a: ConnectedAccountRecord, now: number): boolean {
    if (a.expiresAt === null) return true;
    if (a.expiresAt - now > this.deps.settings.refreshSkewMs) return true;
    return a.refreshTokenEnc === null && a.expiresAt > now;
  }

  #token(a: ConnectedAccountRecord): VaultToken {
    return {
      accessToken: openToken(this.deps.envelope, a.tenantId, a.id, 'access', a.accessTokenEnc),
      expiresAt: a.expiresAt === null ? null : Math.floor(a.expiresAt / 1000),
      scopes: a.scopes,
    };
  }

  async #succeeded(a: ConnectedAccountRecord, caller: VaultCaller, refreshedBy: 'this' | 'other' | null): Promise<VaultToken> {
    const token = this.#token(a);
    await this.#tx((trx) => this.#retrievedEvent(trx, a, caller, refreshedBy));
    return token;
  }

  #retrievedEvent(trx: Executor, a: ConnectedAccountRecord, caller: VaultCaller, refreshedBy: 'this' | 'other' | null) {
    return this.#record(trx, a.tenantId, 'connected_account.token_retrieved', a.organizationId, actorOf(caller), {
      account_id: a.id,
      provider_id: a.providerId,
      user_id: a.userId,
      refreshed: refreshedBy === 'this',
      expires_at: a.expiresAt === null ? null : Math.floor(a.expiresAt / 1000),
      caller: callerData(caller),
    });
  }

  #failedEvent(
    trx: Executor,
    tenantId: string,
    organizationId: string,
    accountId: string,
    caller: VaultCaller,
    reason: string,
    extra: Record<string, unknown> = {},
  ) {
    return this.#record(trx, tenantId, 'connected_account.token_retrieval_failed', organizationId, actorOf(caller), {
      account_id: accountId,
      reason,
      ...extra,
      caller: callerData(caller),
    });
  }

  async #fail(
    tenantId: string,
    organizationId: string,
    accountId: string,
    caller: VaultCaller,
    reason: string,
    err: Error,
    extra: Record<string, unknown> = {},
  ): Promise<never> {
    await this.#tx((trx) => this.#failedEvent(trx, tenantId, organizationId, accountId, caller, reason, extra));
    throw err;
  }

  /**
   * A live access token of the account. Near expiry it is refreshed first, once across all
   * callers and instances: each caller tries to claim the refresh by compare-and-set on the
   * account's version; the one that wins refreshes upstream and stores the new tokens (a rotated
   * refresh token included) before answering; the others wait and read what it stored.
   */
  async retrieve(tenantId: string, organizationId: string, accountId: string, caller: VaultCaller): Promise<VaultToken> {
    const accounts = this.#repos().connectedAccounts;
    let a = await accounts.find(tenantId, accountId);
    const missing = (reason = 'account_not_found') => this.#fail(tenantId, organizationId, accountId, caller, reason, errors.accountNotFound());
    if (!a || a.organizationId !== organizationId) return missing();
    // Every time, as /mcp does: an account whose user left the organization is not served, even
    // one whose removal did not disconnect it (connected concurrently, or before this check).
    if (!(await this.#repos().members.find(tenantId, organizationId, a.userId))) return missing('not_a_member');
    const deadline = performance.now() + this.deps.settings.waitMs;
    /** The version we saw another caller's claim on. */
    let waitedOn: number | null = null;
    for (;;) {
      const now = this.deps.clock.now();
      if (a.status === 'needs_reauthorization') {
        return this.#fail(
          tenantId,
          organizationId,
          a.id,
          caller,
          'needs_reauthorization',
          errors.upstreamRefreshFailed('the account needs reauthorization: its user must connect it again'),
        );
      }
      if (this.#usable(a, now)) return this.#succeeded(a, caller, null);
      // Another caller refreshed while we waited: its token is fresh from the upstream.
      if (waitedOn !== null && a.version > waitedOn && a.expiresAt !== null && a.expiresAt > now) return this.#succeeded(a, caller, 'other');
      const claimLive = a.refreshUntil !== null && a.refreshUntil > now;
      if (!claimLive) {
        if (waitedOn === a.version) {
          // The claim we waited on was released without a new version: that refresh failed.
          return this.#fail(
            tenantId,
            organizationId,
            a.id,
            caller,
            'upstream_unavailable',
            errors.upstreamRefreshFailed('the upstream refresh failed; try again later'),
          );
        }
        const owner = randomUUID();
        if (await accounts.claimRefresh(tenantId, a.id, a.version, owner, now, now + this.deps.settings.leaseMs)) return this.#refresh(a, owner, caller);
      } else {
        waitedOn = a.version;
      }
      if (performance.now() > deadline) {
        return this.#fail(
          tenantId,
          organizationId,
          a.id,
          caller,
          'refresh_wait_timeout',
          errors.upstreamRefreshFailed('the upstream refresh did not finish in time; try again'),
        );
      }
      await sleep(POLL_MS);
      a = await accounts.find(tenantId, accountId);
      if (!a) return missing();
    }
  }

  /** The claimed refresh: one upstream request, then the result stored with its event. */
  async #refresh(a: ConnectedAccountRecord, owner: string, caller: VaultCaller): Promise<VaultToken> {
    const provider = await this.#repos().connectProviders.find(a.tenantId, a.providerId);
    if (!provider) throw errors.serverError();
    const reauthorize = async (reason: string, extra: Record<string, unknown>, description: string): Promise<never> => {
      const marked = await this.#tx(async (trx) => {
        const m = await this.#repos(trx).connectedAccounts.markNeedsReauthorization(a.tenantId, a.id, a.version, owner, this.deps.clock.now());
        if (m) {
          await this.#record(trx, a.tenantId, 'connected_account.reauthorization_required', a.organizationId, actorOf(caller), {
            account_id: a.id,
            provider_id: a.providerId,
            user_id: a.userId,
            reason,
          });
        }
        await this.#failedEvent(trx, a.tenantId, a.organizationId, a.id, caller, reason, extra);
        return m;
      });
      // Removed while we refreshed (its removal revoked the refresh token upstream): gone, not broken.
      if (!marked && !(await this.#repos().connectedAccounts.find(a.tenantId, a.id))) throw errors.accountNotFound();
      throw errors.upstreamRefreshFailed(description);
    };
    if (a.refreshTokenEnc === null) {
      return reauthorize('no_refresh_token', {}, 'the access token expired and the upstream gave no refresh token: the user must connect the account again');
    }
    let fresh;
    try {
      fresh = await this.deps.upstream.refresh(
        provider,
        openClientSecret(this.deps.envelope, provider),
        openToken(this.deps.envelope, a.tenantId, a.id, 'refresh', a.refreshTokenEnc),
      );
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      if (err.kind === 'refused' && err.code === 'invalid_grant') {
        return reauthorize(
          'invalid_grant',
          { upstream_error: 'invalid_grant' },
          'the upstream refused the refresh token (invalid_grant): the user must connect the account again',
        );
      }
      await this.#tx(async (trx) => {
        await this.#repos(trx).connectedAccounts.releaseRefresh(a.tenantId, a.id, a.version, owner);
        await this.#failedEvent(trx, a.tenantId, a.organizationId, a.id, caller, `upstream_${err.kind}`, err.code ? { upstream_error: err.code } : {});
      });
      throw errors
        .upstreamRefreshFailed(`the upstream refresh failed (${err.kind === 'refused' ? `the upstream answered ${err.code}` : err.kind.replace('_', ' ')})`)
        .because(err);
    }
    const now = this.deps.clock.now();
    const stored = {
      accessTokenEnc: sealToken(this.deps.envelope, a.tenantId, a.id, 'access', fresh.accessToken),
      // No new refresh token in the answer: the old one stays valid (RFC 6749 §6).
      refreshTokenEnc: fresh.refreshToken === null ? a.refreshTokenEnc : sealToken(this.deps.envelope, a.tenantId, a.id, 'refresh', fresh.refreshToken),
      expiresAt: fresh.expiresIn === null ? null : now + fresh.expiresIn * 1000,
      scopes: fresh.scopes ?? a.scopes,
    };
    const next: ConnectedAccountRecord = {
      ...a,
      ...stored,
      version: a.version + 1,
      refreshOwner: null,
      refreshUntil: null,
      lastRefreshedAt: now,
      updatedAt: now,
    };
    const ok = await this.#tx(async (trx) => {
      const landed = await this.#repos(trx).connectedAccounts.storeRefreshed(a.tenantId, a.id, a.version, owner, stored, now);
      if (landed) await this.#retrievedEvent(trx, next, caller, 'this');
      else await this.#failedEvent(trx, a.tenantId, a.organizationId, a.id, caller, 'refresh_superseded');
      return landed;
    });
    if (!ok) {
      // Removed while we refreshed (its user left the organization, or it was disconnected): the
      // fresh tokens were never stored, so nothing else would revoke them upstream.
      if (!(await this.#repos().connectedAccounts.find(a.tenantId, a.id))) {
        const tokens: RevocableTokens = [[fresh.accessToken, 'access_token']];
        if (fresh.refreshToken !== null) tokens.unshift([fresh.refreshToken, 'refresh_token']);
        await this.#revokeUpstream(a.id, provider, () => tokens);
        throw errors.accountNotFound();
      }
      // The account was connected again while we refreshed: its new state wins.
      throw errors.upstreamRefreshFailed('the account changed during the refresh; try again');
    }
    return { accessToken: fresh.accessToken, expiresAt: next.expiresAt === null ? null : Math.floor(next.expiresAt / 1000), scopes: next.scopes };
  }
}
