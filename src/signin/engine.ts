/**
 * The sign-in engine, framework-free (docs/architecture.md, "The path of a sign-in"). A sign-in
 * enters through /authorize (a stored `flw_…` flow wrapping the OAuth core's authorization flow)
 * or from a self-service page's `return_to`; each submission (a password, a passkey, a code, a
 * consent, an upstream IdP's answer) is checked here, the flow moves on by compare-and-set, and
 * the table of steps (steps.ts) decides what comes next. The HTTP layer parses submissions and
 * renders the outcomes (outcome.ts).
 */
import { sha256Hex } from '../kernel/crypto/hash.js';
import { AppError, errors } from '../kernel/errors.js';
import { newSecret } from '../kernel/ids.js';
import type { Clock } from '../kernel/clock.js';
import { acrOf, amrOfPasskey, minimumAcr } from '../oauth/authorize/acr.js';
import { type Outcome as AuthorizeOutcome, sessionSatisfies } from '../oauth/authorize/engine.js';
import type { SessionRecord } from '../oauth/authorize/types.js';
import type { RawParams } from '../oauth/authorize/validate.js';
import type { OAuthServer } from '../oauth/compose.js';
import type { OAuthTenant } from '../oauth/types.js';
import { safeReturnTo } from '../screens/cookies.js';
import type { MfaService } from '../screens/mfa/service.js';
import type { SigninService } from '../screens/service.js';
import type { UserRecord } from '../storage/repos/users.js';
import type { Accepted, EmailSigninService } from '../signup/service.js';
import { SocialLoginError, type SocialSigninService } from '../social/service.js';
import { newBrowserBinding, type SsoContinuation, type SsoFinish, SsoLoginError, type SsoSigninService } from '../sso/service.js';
import { type Ctx, type FlowRef, type OpenDevice, type OpenFlow, pageUrl } from './context.js';
import { SIGNIN_FLOW_PREFIX, type SigninFlowRecord, type SigninFlowStore, type StepName } from './flows.js';
import type { Message } from '../screens/i18n/index.js';
import { DEVICE_CODE_INVALID, DEVICE_LIMITED } from './messages.js';
import {
  BAD_CREDENTIALS,
  CHALLENGE_LIMITED,
  CODE_INVALID,
  EMAIL_UNVERIFIED,
  flowGone,
  LOGIN_LIMITED,
  PASSKEY_REQUIRED,
  socialFailure,
  SSO_UNAVAILABLE,
  ssoFailure,
} from './messages.js';
import { fail, redirect, type SigninOutcome } from './outcome.js';
import { owedAfterPassword } from './second-factor.js';
import { type StepPorts, type StepState, walk } from './steps.js';
import { challengeView, consentView, loginView } from './views.js';
import { activateView, deviceConsentView, deviceDoneView } from './views.js';

/** The console's setup links (src/console/service.ts): consumes one and creates the administrator, signing them in inside that transaction. */
export interface ConsoleSetupPort {
  completeSetup(
    tenantId: string,
    token: string,
    input: { email: string; password: string },
    signIn: (trx: Transaction, user: UserRecord, now: number) => Promise<{ sessionId: string; pending: boolean; ip: string }>,
  ): Promise<UserRecord>;
}
type Transaction = Parameters<SigninService['openSession']>[0];

/** Invitations to an organization (src/management/invitations/service.ts): creates the invitee's account from a link, signing them in inside that transaction. */
export interface InvitationSignupPort {
  acceptAsNewUser(
    tenantId: string,
    token: string,
    input: { password: string },
    signIn: (trx: Transaction, user: UserRecord, now: number) => Promise<{ sessionId: string; pending: boolean; ip: string }>,
  ): Promise<{ organizationName: string }>;
}

export interface SigninEngineDeps {
  flows: SigninFlowStore;
  authorize: OAuthServer['authorize'];
  /** The device grant's verification side (RFC 8628 §3.3): user codes and decisions. */
  device: OAuthServer['device'];
  signin: SigninService;
  mfa: MfaService;
  sso: SsoSigninService;
  /** Social sign-in (docs/social.md): the login page's buttons and their round trips. */
  social?: Pick<SocialSigninService, 'start' | 'buttons' | 'forHint'>;
  console: ConsoleSetupPort;
  invitations: InvitationSignupPort;
  /** Sign-up and passwordless sign-in by email (docs/signup.md): what the login page offers, and the tenant's sign-in policy. */
  emailSignin?: Pick<EmailSigninService, 'offers' | 'policy'>;
  /** Sends a verification email to a user the policy stops until their address is verified. */
  requestVerification?: (tenant: OAuthTenant, userId: string) => Promise<void>;
  clock: Clock;
  /** How long a sign-in may take (KEYHALL_LOGIN_FLOW_TTL_SECONDS). */
  flowTtlSeconds: number;
}

/** What the engine knows of the browser: its request metadata and cookies. */
export interface Browser {
  ip: string;
  userAgent: string | null;
  /** The session cookie. */
  sessionToken?: string;
  /** The SSO round-trip binding cookie, if the browser has one. */
  ssoBinding?: string;
  /** The WebAuthn challenge binding of this browser (browserBinding of its CSRF cookie). */
  webauthnBinding: string;
}

/** The request metadata a sign-in records (never the browser's cookies). */
export const meta = (b: Browser) => ({ ip: b.ip, userAgent: b.userAgent });

type Resolved = { ok: true; ctx: Ctx } | { ok: false };

export class SigninEngine {
  constructor(private readonly deps: SigninEngineDeps) {}

  // ------------------------------------------------------------ context and flows

  /** The context a page submitted: the open flow its handle names (or none), and a checked return_to. */
  async #resolve(tenant: OAuthTenant, ref: FlowRef): Promise<Resolved> {
    const returnTo = safeReturnTo(ref.returnTo, tenant.issuer);
    if (ref.flow === undefined) return { ok: true, ctx: { entry: 'account', returnTo } };
    const open = await this.#open(tenant, ref.flow);
    if (open && 'device' in open) return { ok: true, ctx: { entry: 'device', returnTo, device: open } };
    return open ? { ok: true, ctx: { entry: open.record.entry, returnTo, flow: open } } : { ok: false };
  }

  async #open(tenant: OAuthTenant, handle: string): Promise<OpenFlow | OpenDevice | undefined> {
    if (!handle.startsWith(SIGNIN_FLOW_PREFIX) || handle.length > 100) return undefined;
    const hash = sha256Hex(handle);
    const record = await this.deps.flows.find(tenant.id, hash);
    if (!record || record.completedAt !== null || record.expiresAt <= this.deps.clock.now()) return undefined;
    if (record.entry === 'device') {
      const device = record.deviceCodeHash ? await this.deps.device.load(tenant, record.deviceCodeHash) : undefined;
      return device && { handle, hash, record, device };
    }
    if (!record.authorizeFlowHash) return undefined;
    const authorize = await this.deps.authorize.load(record.authorizeFlowHash, handle, tenant);
    return authorize && { handle, hash, record, authorize };
  }

  /** A new flow for an /authorize request that needs the person (login or consent). */
  async #start(tenant: OAuthTenant, authorizeFlowId: string): Promise<string> {
    const handle = newSecret(SIGNIN_FLOW_PREFIX);
    const now = this.deps.clock.now();
    await this.deps.flows.insert(sha256Hex(handle), {
      tenantId: tenant.id,
      entry: 'authorize',
      authorizeFlowHash: sha256Hex(authorizeFlowId),
      deviceCodeHash: null,
      step: 'first_factor',
      version: 0,
      createdAt: now,
      expiresAt: now + this.deps.flowTtlSeconds * 1000,
      completedAt: null,
    });
    return handle;
  }

  /** Records that the flow passed a step; false when another request moved it first (or it expired). */
  async #advance(tenant: OAuthTenant, ctx: Ctx, step: StepName): Promise<boolean> {
    const f = ctx.flow ?? ctx.device;
    if (!f) return true;
    if (!(await this.deps.flows.advance(tenant.id, f.hash, f.record.version, step, this.deps.clock.now()))) return false;
    f.record = { ...f.record, step, version: f.record.version + 1 };
    return true;
  }

  #ports(tenant: OAuthTenant): StepPorts {
    return {
      hasSecondFactor: (userId) => this.deps.mfa.hasSecondFactor(tenant.id, userId),
      meetsMfaPolicy: async (session) => acrOf(session.amr ?? ['pwd']) !== 'pwd' || (await this.deps.mfa.policyFor(tenant.id, session.userId)) !== 'required',
      continueAuthorization: (s) => this.deps.authorize.continue(s.ctx.flow!.authorize, tenant, s.session, { consented: s.consented }),
      fromAuthorization: (ctx, outcome) => this.#fromAuthorization(tenant, ctx, outcome),
    };
  }

  /** An outcome of the OAuth core: a redirect to the client completes the flow (once). */
  async #fromAuthorization(tenant: OAuthTenant, ctx: Ctx, outcome: AuthorizeOutcome): Promise<SigninOutcome> {
    switch (outcome.kind) {
      case 'login':
        return redirect(pageUrl('/login', ctx));
      case 'consent':
        return redirect(pageUrl('/login/consent', ctx));
      case 'error':
        return fail(new AppError(400, outcome.error, outcome.description));
      case 'redirect': {
        const f = ctx.flow;
        if (f && !(await this.deps.flows.complete(tenant.id, f.hash, f.record.version, this.deps.clock.now()))) return fail(flowGone());
        return redirect(outcome.location);
      }
    }
  }

  /** The one resume path: the table of steps, with what the browser has now. */
  async #resume(tenant: OAuthTenant, ctx: Ctx, have: Omit<StepState, 'ctx' | 'consented'>, consented = false): Promise<SigninOutcome> {
    return walk({ ctx, consented, ...have }, this.#ports(tenant));
  }

  async #sessions(tenant: OAuthTenant, browser: Browser) {
    const session = await this.deps.signin.current(tenant.id, browser.sessionToken);
    const pending = session ? undefined : await this.deps.signin.pending(tenant.id, browser.sessionToken);
    return { session, pending };
  }

  #cookie(token: string) {
    return { token, maxAgeSeconds: this.deps.signin.settings.sessionMaxSeconds };
  }

  // ------------------------------------------------------------ entry: /authorize

  /** GET/POST /authorize: the OAuth core validates; when the person is needed, a flow starts. */
  async authorize(raw: RawParams, tenant: OAuthTenant, browser: Browser): Promise<SigninOutcome> {
    const session = await this.deps.signin.current(tenant.id, browser.sessionToken);
    const outcome = await this.deps.authorize.start(raw, tenant, session);
    if (outcome.kind !== 'login' && outcome.kind !== 'consent') return this.#fromAuthorization(tenant, { entry: 'authorize' }, outcome);
    const handle = await this.#start(tenant, outcome.flow);
    if (outcome.kind === 'login' && outcome.create) return this.#signupRequested(tenant, handle);
    return redirect(pageUrl(outcome.kind === 'login' ? '/login' : '/login/consent', { flow: { handle } }));
  }

  /** prompt=create (OIDC Prompt Create 1.0): the sign-up page, or invalid_request to the client when the tenant's sign-up is off. */
  async #signupRequested(tenant: OAuthTenant, handle: string): Promise<SigninOutcome> {
    const offers = await this.deps.emailSignin?.offers(tenant.id);
    if (offers?.signup) return redirect(pageUrl('/signup', { flow: { handle } }));
    const open = await this.#open(tenant, handle);
    if (!open || 'device' in open) return fail(flowGone());
    return this.#fromAuthorization(tenant, { entry: 'authorize', flow: open }, await this.deps.authorize.refuseSignup(open.authorize, tenant));
  }

  // ------------------------------------------------------------ identify, route, first factor

  /** Where an SSO sign-in continues, with what the flow asks of it (its organization's MFA policy, its acr). */
  #continuation(ctx: Ctx): SsoContinuation {
    const page = ctx.returnTo ? { returnTo: ctx.returnTo } : {};
    if (ctx.device) return { ...page, flow: ctx.device.handle };
    if (!ctx.flow) return page;
    const request = ctx.flow.authorize.flow.request;
    const acr = minimumAcr(request.acrValues);
    return { ...page, flow: ctx.flow.handle, ...(request.organizationId ? { organizationId: request.organizationId } : {}), ...(acr ? { acr } : {}) };
  }

  /** To an upstream IdP; the round trip is bound to this browser (its binding cookie, kept across tabs). */
  async #upstream(tenant: OAuthTenant, connectionId: string, continuation: SsoContinuation, browser: Browser, loginHint?: string): Promise<SigninOutcome> {
    const binding = browser.ssoBinding && browser.ssoBinding.length === 43 ? browser.ssoBinding : newBrowserBinding();
    try {
      return { kind: 'upstream', location: await this.deps.sso.start(tenant, connectionId, binding, continuation, loginHint), browser: binding };
    } catch (err) {
      if (err instanceof SsoLoginError) return fail(ssoFailure(err.reason));
      throw err;
    }
  }

  /** The login page; an /authorize request naming its connection (or an organization requiring SSO) skips the form. */
  async showLogin(tenant: OAuthTenant, ref: FlowRef, browser: Browser): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return fail(flowGone());
    const request = r.ctx.flow?.authorize.flow.request;
    // A `connection` hint naming a social connection goes straight to its provider.
    const social = request ? await this.deps.social?.forHint(tenant.id, request.connectionHint) : undefined;
    if (request && social) return this.#social(tenant, social, this.#continuation(r.ctx), browser, request.loginHint ?? undefined);
    const connection = request ? await this.deps.sso.forRequest(tenant.id, request) : undefined;
    if (request && connection) return this.#upstream(tenant, connection, this.#continuation(r.ctx), browser, request.loginHint ?? undefined);
    return loginView(this.deps, tenant, r.ctx, 200, { email: request?.loginHint ?? undefined }, { sso: true });
  }

  /**
   * Email + password. Home-realm discovery first: a verified SSO domain continues at its IdP when
   * no password was typed, and always when the organization requires SSO (the password is then
   * never checked).
   */
  async password(tenant: OAuthTenant, ref: FlowRef, input: { email: string; password: string }, browser: Browser): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return fail(flowGone());
    const { ctx } = r;
    const { email, password } = input;
    const realm = await this.deps.sso.homeRealm(tenant.id, email);
    if (realm.kind === 'sso' && (realm.required || password === '')) return this.#upstream(tenant, realm.connectionId, this.#continuation(ctx), browser, email);
    if (realm.kind === 'unavailable') return loginView(this.deps, tenant, ctx, 403, { email, message: SSO_UNAVAILABLE }, { sso: true });
    const request = ctx.flow?.authorize.flow.request;
    const requireVerified = (await this.deps.emailSignin?.policy(tenant.id))?.requireVerifiedEmail === true;
    const result = await this.deps.signin.login(
      tenant.id,
      email,
      password,
      meta(browser),
      browser.sessionToken,
      (user) => owedAfterPassword(this.deps.mfa, tenant.id, user.id, { organizationId: request?.organizationId, acr: minimumAcr(request?.acrValues) }),
      requireVerified,
    );
    if (result.kind === 'unverified') return this.#unverified(tenant, ctx, result.user);
    if (result.kind === 'limited')
      return loginView(this.deps, tenant, ctx, 429, { email, message: LOGIN_LIMITED }, { sso: true, retryAfterSeconds: result.retryAfterSeconds });
    if (result.kind === 'invalid') return loginView(this.deps, tenant, ctx, 401, { email, message: BAD_CREDENTIALS }, { sso: true });
    return this.#signedIn(tenant, ctx, result.session, result.token);
  }

  /** A passkey as the first factor (discoverable credential, user verification required). */
  async passkey(tenant: OAuthTenant, ref: FlowRef, credential: string | undefined, browser: Browser): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return fail(flowGone());
    const result = await this.deps.mfa.authenticatePasskey(tenant, browser.webauthnBinding, credential, 'login', null, meta(browser));
    if (result.kind !== 'ok')
      return loginView(this.deps, tenant, r.ctx, 401, { message: { english: result.message, fallback: 'passkey.sign_in_failed' } }, { sso: false });
    if (!result.user.emailVerified && (await this.deps.emailSignin?.policy(tenant.id))?.requireVerifiedEmail === true)
      return this.#unverified(tenant, r.ctx, result.user);
    const login = await this.deps.signin.passkeyLogin(tenant.id, result.user, meta(browser), result.amr, result.passkey.id, browser.sessionToken);
    if (login.kind !== 'ok') return fail(errors.serverError());
    return this.#signedIn(tenant, r.ctx, login.session, login.token);
  }

  /**
   * The policy requires a verified email and this user's is not: no session; a new verification
   * email (link and code) and the login page saying so, with the way to the code page.
   */
  async #unverified(tenant: OAuthTenant, ctx: Ctx, user: UserRecord): Promise<SigninOutcome> {
    await this.deps.requestVerification?.(tenant, user.id);
    return loginView(this.deps, tenant, ctx, 403, { email: user.email, message: EMAIL_UNVERIFIED, verifyEmail: user.email }, { sso: false });
  }

  /**
   * A sign-in by email (docs/signup.md): a passwordless code or link, or a new account from the
   * sign-up page. The second factor is owed as after a password; then the flow (or page) goes on.
   */
  async emailSignedIn(tenant: OAuthTenant, ref: FlowRef, accepted: Accepted, browser: Browser): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    const ctx: Ctx = r.ok ? r.ctx : { entry: 'account' };
    const request = ctx.flow?.authorize.flow.request;
    const pending = await owedAfterPassword(this.deps.mfa, tenant.id, accepted.user.id, {
      organizationId: request?.organizationId,
      acr: minimumAcr(request?.acrValues),
    });
    const login = await this.deps.signin.emailLogin(tenant.id, accepted.user, meta(browser), accepted.amr, pending, browser.sessionToken);
    if (login.kind !== 'ok') return fail(errors.serverError());
    // The flow may have ended while the email travelled: the person is signed in all the same.
    if (!r.ok) return { ...redirect('/sessions'), session: this.#cookie(login.token) };
    return this.#signedIn(tenant, ctx, login.session, login.token);
  }

  /** A first factor was given (a new session, perhaps owing its second factor): the flow moves on. */
  async #signedIn(tenant: OAuthTenant, ctx: Ctx, session: SessionRecord, token: string): Promise<SigninOutcome> {
    const cookie = { session: this.#cookie(token) };
    if (!(await this.#advance(tenant, ctx, 'first_factor'))) return { ...fail(flowGone()), ...cookie };
    const have = session.mfaPending ? { pending: session } : { session };
    return { ...(await this.#resume(tenant, ctx, have)), ...cookie };
  }

  // ------------------------------------------------------------ upstream IdP (SSO)

  /** GET /sso/{id}/start: a sign-in at that connection, for a flow or a page. */
  async startUpstream(tenant: OAuthTenant, ref: FlowRef, connectionId: string, loginHint: string | undefined, browser: Browser): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return fail(ssoFailure('state_invalid'));
    const hint = loginHint ?? r.ctx.flow?.authorize.flow.request.loginHint ?? undefined;
    return this.#upstream(tenant, connectionId, this.#continuation(r.ctx), browser, hint?.slice(0, 254));
  }

  /** To a social connection's provider; the round trip is bound to this browser (the same binding cookie as SSO). */
  async #social(tenant: OAuthTenant, connectionId: string, continuation: SsoContinuation, browser: Browser, loginHint?: string): Promise<SigninOutcome> {
    const social = this.deps.social;
    if (!social) return fail(socialFailure('connection_unknown'));
    const binding = browser.ssoBinding && browser.ssoBinding.length === 43 ? browser.ssoBinding : newBrowserBinding();
    try {
      return { kind: 'upstream', location: await social.start(tenant, connectionId, binding, continuation, loginHint), browser: binding };
    } catch (err) {
      if (err instanceof SocialLoginError) return fail(socialFailure(err.reason));
      throw err;
    }
  }

  /** GET /social/{id}/start: the login page's button of that connection, for a flow or a page. */
  async startSocial(tenant: OAuthTenant, ref: FlowRef, connectionId: string, browser: Browser): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return fail(socialFailure('state_invalid'));
    const hint = r.ctx.flow?.authorize.flow.request.loginHint ?? undefined;
    return this.#social(tenant, connectionId, this.#continuation(r.ctx), browser, hint?.slice(0, 254));
  }

  /** An explicit link from /sessions: a round trip whose answer links the identity to the signed-in user. */
  startLink(tenant: OAuthTenant, connectionId: string, userId: string, browser: Browser): Promise<SigninOutcome> {
    return this.#upstream(tenant, connectionId, { linkUserId: userId, returnTo: '/sessions' }, browser);
  }

  /** An explicit social link from /account (docs/account.md): a round trip whose answer links the identity to the signed-in user. */
  startSocialLink(tenant: OAuthTenant, connectionId: string, userId: string, browser: Browser): Promise<SigninOutcome> {
    return this.#social(tenant, connectionId, { linkUserId: userId, returnTo: '/account?done=linked#identities' }, browser);
  }

  /** The IdP's answer, validated by the SSO service: a session, then the flow (or page) that started it. */
  async upstreamFinished(tenant: OAuthTenant, done: SsoFinish): Promise<SigninOutcome> {
    // An explicit link: the browser's session stays as it is.
    if (done.kind === 'linked') return redirect(done.continuation.returnTo ?? '/sessions');
    const r = await this.#resolve(tenant, { flow: done.continuation.flow, returnTo: done.continuation.returnTo });
    if (!r.ok) return { ...fail(ssoFailure('state_invalid')), session: this.#cookie(done.token) };
    // Keyhall's own second factor may still be owed: the same steps as after a password.
    return this.#signedIn(tenant, r.ctx, done.session, done.token);
  }

  // ------------------------------------------------------------ second factor and enrolment

  /** The context and pending sign-in of a second-factor step, or the outcome that replaces it. */
  async #owing(tenant: OAuthTenant, ref: FlowRef, browser: Browser): Promise<{ ctx: Ctx; pending: SessionRecord } | { outcome: SigninOutcome }> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return { outcome: fail(flowGone()) };
    const pending = await this.deps.signin.pending(tenant.id, browser.sessionToken);
    if (!pending) return { outcome: redirect(pageUrl('/login', r.ctx)) };
    return { ctx: r.ctx, pending };
  }

  /** GET /mfa/challenge. */
  async showChallenge(tenant: OAuthTenant, ref: FlowRef, browser: Browser): Promise<SigninOutcome> {
    const o = await this.#owing(tenant, ref, browser);
    return 'outcome' in o ? o.outcome : challengeView(this.deps, tenant, o.ctx, o.pending, 200);
  }

  /** The challenge page again, with what went wrong (a refused passkey enrolment during sign-in). */
  async refuseChallenge(tenant: OAuthTenant, ref: FlowRef, pending: SessionRecord, status: number, message: Message): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    return challengeView(this.deps, tenant, r.ok ? r.ctx : { entry: 'account' }, pending, status, message);
  }

  /** An authenticator-app code or a recovery code as the second factor. */
  async secondFactorCode(tenant: OAuthTenant, ref: FlowRef, input: { code?: string; recoveryCode?: string }, browser: Browser): Promise<SigninOutcome> {
    const o = await this.#owing(tenant, ref, browser);
    if ('outcome' in o) return o.outcome;
    const { ctx, pending } = o;
    if (minimumAcr(ctx.flow?.authorize.flow.request.acrValues) === 'phr') return challengeView(this.deps, tenant, ctx, pending, 400, PASSKEY_REQUIRED);
    const r = await this.deps.mfa.checkCode(
      tenant.id,
      pending.userId,
      input.code ? { totp: input.code } : { recovery: input.recoveryCode ?? '' },
      meta(browser),
    );
    if (r.kind === 'limited') return challengeView(this.deps, tenant, ctx, pending, 429, CHALLENGE_LIMITED, r.retryAfterSeconds);
    if (r.kind === 'invalid') return challengeView(this.deps, tenant, ctx, pending, 401, CODE_INVALID);
    return this.#secondFactorGiven(tenant, ctx, pending, r.amr);
  }

  /** A passkey as the second factor. */
  async secondFactorPasskey(tenant: OAuthTenant, ref: FlowRef, credential: string | undefined, browser: Browser): Promise<SigninOutcome> {
    const o = await this.#owing(tenant, ref, browser);
    if ('outcome' in o) return o.outcome;
    const { ctx, pending } = o;
    const r = await this.deps.mfa.authenticatePasskey(tenant, browser.webauthnBinding, credential, 'second_factor', pending.userId, meta(browser));
    if (r.kind !== 'ok') return challengeView(this.deps, tenant, ctx, pending, 401, { english: r.message, fallback: 'passkey.sign_in_failed' });
    await this.deps.mfa.challengeSucceeded(tenant.id, pending.userId, 'passkey', browser.ip);
    return this.#secondFactorGiven(tenant, ctx, pending, r.amr);
  }

  /**
   * A factor enrolled during a sign-in that owed one it did not have (the policy's `required`, a
   * step-up): a passkey (user verification was required) or an authenticator app completes it.
   * `pause`: the page shows something first (the new recovery codes), so the outcome is the link
   * that resumes the flow (/mfa/continue) instead of its next step.
   */
  async enrolled(
    tenant: OAuthTenant,
    ref: FlowRef,
    pending: SessionRecord,
    factor: { passkey: { backedUp: boolean } } | 'totp',
    opts: { pause?: boolean } = {},
  ): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return fail(flowGone());
    return this.#secondFactorGiven(tenant, r.ctx, pending, factor === 'totp' ? ['otp'] : amrOfPasskey(factor.passkey, true), opts.pause === true);
  }

  /** Marks the pending session's second factor given (once); the flow moves on. */
  async #secondFactorGiven(tenant: OAuthTenant, ctx: Ctx, pending: SessionRecord, amr: string[], pause = false): Promise<SigninOutcome> {
    const done = await this.deps.signin.completeSecondFactor(tenant.id, pending, amr);
    if (!done) return redirect(pageUrl('/login', ctx));
    if (!(await this.#advance(tenant, ctx, 'second_factor'))) return fail(flowGone());
    return pause ? redirect(pageUrl('/mfa/continue', ctx)) : this.#resume(tenant, ctx, { session: done });
  }

  /** GET /mfa/continue: the flow goes on with what the browser has (after an enrolment showed its recovery codes). */
  async resume(tenant: OAuthTenant, ref: FlowRef, browser: Browser): Promise<SigninOutcome> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok) return fail(flowGone());
    return this.#resume(tenant, r.ctx, await this.#sessions(tenant, browser));
  }

  /** The context of a page that only carries it on (the authenticator-app enrolment), or none when it is gone. */
  async carried(tenant: OAuthTenant, ref: FlowRef): Promise<{ flow?: string; returnTo?: string; formTargets: string[]; uiLocales: readonly string[] | null }> {
    const r = await this.#resolve(tenant, ref);
    const f = r.ok ? r.ctx.flow : undefined;
    return {
      flow: f?.handle ?? (r.ok ? r.ctx.device?.handle : undefined),
      returnTo: safeReturnTo(ref.returnTo, tenant.issuer),
      formTargets: f ? [f.authorize.flow.request.redirectUri] : [],
      uiLocales: f?.authorize.flow.request.uiLocales ?? null,
    };
  }

  // ------------------------------------------------------------ entry: the console's setup link

  /**
   * Creates the administrator a setup link names and signs them in (amr `pwd`: they have just
   * chosen the password, and the single-use link is the proof), in the link's transaction, so the
   * console can offer a passkey or an authenticator app at once. Under an MFA policy of
   * `required` the session starts owing its second factor, like any password sign-in: it can
   * only enrol one (the console's enrolment). Returns to the console with its session.
   */
  async consoleSetup(tenant: OAuthTenant, input: { token: string; email: string; password: string }, browser: Browser) {
    // A new user belongs to no organization: the tenant's own policy is the one that applies.
    const pending = (await this.deps.mfa.policyFor(tenant.id, '')) === 'required';
    let token = '';
    const user = await this.deps.console.completeSetup(tenant.id, input.token, { email: input.email, password: input.password }, async (trx, u, now) => {
      const opened = await this.deps.signin.openSession(
        trx,
        tenant.id,
        u.id,
        meta(browser),
        now,
        { amr: ['pwd'], pending, method: 'setup_link' },
        browser.sessionToken,
      );
      token = opened.token;
      return { sessionId: opened.session.id, pending, ip: browser.ip };
    });
    return { user, secondFactorRequired: pending, session: this.#cookie(token) };
  }

  // ------------------------------------------------------------ entry: an invitation's link

  /**
   * Creates the invitee's account from an invitation link (their chosen password; the link proved
   * the address), makes them a member and signs them in (amr `pwd`), in the invitation's
   * transaction. Under an MFA policy of `required` the session starts owing its second factor,
   * like any password sign-in.
   */
  async invitationSignup(tenant: OAuthTenant, input: { token: string; password: string }, browser: Browser) {
    const pending = (await this.deps.mfa.policyFor(tenant.id, '')) === 'required';
    let token = '';
    const accepted = await this.deps.invitations.acceptAsNewUser(tenant.id, input.token, { password: input.password }, async (trx, u, now) => {
      const opened = await this.deps.signin.openSession(trx, tenant.id, u.id, meta(browser), now, { amr: ['pwd'], pending }, browser.sessionToken);
      token = opened.token;
      return { sessionId: opened.session.id, pending, ip: browser.ip };
    });
    return { organizationName: accepted.organizationName, secondFactorRequired: pending, session: this.#cookie(token) };
  }

  // ------------------------------------------------------------ consent

  /** The flow and usable session of a consent step, or the outcome that replaces it. */
  async #consenting(
    tenant: OAuthTenant,
    ref: FlowRef,
    browser: Browser,
  ): Promise<{ ctx: Ctx & { flow: OpenFlow }; session: SessionRecord } | { outcome: SigninOutcome }> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok || !r.ctx.flow) return { outcome: fail(flowGone()) };
    const ctx = r.ctx as Ctx & { flow: OpenFlow };
    const session = await this.deps.signin.current(tenant.id, browser.sessionToken);
    if (!sessionSatisfies(ctx.flow.authorize.flow, session)) return { outcome: redirect(pageUrl('/login', { flow: ctx.flow })) };
    return { ctx, session };
  }

  /** GET /login/consent. */
  async showConsent(tenant: OAuthTenant, ref: FlowRef, browser: Browser): Promise<SigninOutcome> {
    const c = await this.#consenting(tenant, ref, browser);
    if ('outcome' in c) return c.outcome;
    return consentView(this.deps, tenant, c.ctx.flow);
  }

  /** POST /login/consent: allowed (remembered, then the code) or denied (access_denied to the client). */
  async consent(tenant: OAuthTenant, ref: FlowRef, allow: boolean, browser: Browser): Promise<SigninOutcome> {
    const c = await this.#consenting(tenant, ref, browser);
    if ('outcome' in c) return c.outcome;
    const { ctx, session } = c;
    if (!allow) return this.#fromAuthorization(tenant, ctx, await this.deps.authorize.deny(ctx.flow.authorize, tenant));
    const request = ctx.flow.authorize.flow.request;
    await this.deps.signin.grantConsent(tenant.id, session.userId, ctx.flow.authorize.client.id, request.scopes, request.resources);
    if (!(await this.#advance(tenant, ctx, 'consent'))) return fail(flowGone());
    return this.#resume(tenant, ctx, { session }, true);
  }

  // ------------------------------------------------------------ entry: the device grant's /activate (RFC 8628 §3.3)

  /** GET /activate: the user code form, prefilled from verification_uri_complete; a GET never decides anything. */
  showActivate(tenant: OAuthTenant, userCode: string | undefined): Promise<SigninOutcome> {
    return activateView(this.deps, tenant, 200, { userCode: userCode?.slice(0, 64) });
  }

  /**
   * POST /activate: the code names a pending device authorization (a wrong one counts against the
   * address: 429 after ten in ten minutes). A `device` flow starts; the person signs in (or is
   * already) and the steps lead to its approval page.
   */
  async activate(tenant: OAuthTenant, userCode: string | undefined, browser: Browser): Promise<SigninOutcome> {
    const typed = userCode?.slice(0, 64);
    const found = await this.deps.device.findByUserCode(tenant, typed, browser.ip);
    if (found.kind === 'limited')
      return activateView(this.deps, tenant, 429, { userCode: typed, message: DEVICE_LIMITED, error: 'rate_limited' }, found.retryAfterSeconds);
    if (found.kind === 'invalid') return activateView(this.deps, tenant, 400, { userCode: typed, message: DEVICE_CODE_INVALID, error: 'invalid_user_code' });
    const handle = newSecret(SIGNIN_FLOW_PREFIX);
    const hash = sha256Hex(handle);
    const now = this.deps.clock.now();
    const record: SigninFlowRecord = {
      tenantId: tenant.id,
      entry: 'device',
      authorizeFlowHash: null,
      deviceCodeHash: found.device.hash,
      step: 'first_factor',
      version: 0,
      createdAt: now,
      expiresAt: Math.min(now + this.deps.flowTtlSeconds * 1000, found.device.authorization.expiresAt),
      completedAt: null,
    };
    await this.deps.flows.insert(hash, record);
    return this.#resume(tenant, { entry: 'device', device: { handle, hash, record, device: found.device } }, await this.#sessions(tenant, browser));
  }

  /** The device flow and usable session of its approval page, or the outcome that replaces it (sign in first). */
  async #deciding(
    tenant: OAuthTenant,
    ref: FlowRef,
    browser: Browser,
  ): Promise<{ ctx: Ctx & { device: OpenDevice }; session: SessionRecord } | { outcome: SigninOutcome }> {
    const r = await this.#resolve(tenant, ref);
    if (!r.ok || !r.ctx.device) return { outcome: fail(flowGone()) };
    const ctx = r.ctx as Ctx & { device: OpenDevice };
    const { session, pending } = await this.#sessions(tenant, browser);
    if (!session || !(await this.#ports(tenant).meetsMfaPolicy(session))) return { outcome: await this.#resume(tenant, ctx, { pending }) };
    return { ctx, session };
  }

  /** GET /activate/confirm: the client and its scopes, to approve or deny. */
  async showDeviceApproval(tenant: OAuthTenant, ref: FlowRef, browser: Browser): Promise<SigninOutcome> {
    const d = await this.#deciding(tenant, ref, browser);
    return 'outcome' in d ? d.outcome : deviceConsentView(this.deps, tenant, d.ctx.device);
  }

  /** POST /activate/confirm: the person's decision, once (the flow completes, then the authorization is decided). */
  async deviceDecision(tenant: OAuthTenant, ref: FlowRef, allow: boolean, browser: Browser): Promise<SigninOutcome> {
    const d = await this.#deciding(tenant, ref, browser);
    if ('outcome' in d) return d.outcome;
    const { ctx, session } = d;
    const f = ctx.device;
    if (!(await this.deps.flows.complete(tenant.id, f.hash, f.record.version, this.deps.clock.now()))) return fail(flowGone());
    const decision = {
      status: allow ? ('approved' as const) : ('denied' as const),
      userId: session.userId,
      sessionId: session.id,
      authTime: session.authTime,
      amr: session.amr ?? ['pwd'],
    };
    if (!(await this.deps.device.decide(tenant, f.device.hash, decision))) return fail(flowGone());
    return deviceDoneView(this.deps, tenant, allow);
  }
}
