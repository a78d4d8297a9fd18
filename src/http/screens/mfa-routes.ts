/**
 * Passkeys and second factors on the hosted screens: passkey sign-in on /login, the /mfa pages
 * (passkeys, authenticator app, recovery codes), the sign-in challenge /mfa/challenge, and the
 * /webauthn.js script. GETs change nothing; form POSTs check CSRF and answer 303 (or the page with
 * its message); the WebAuthn options endpoints check the same CSRF token and answer JSON.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { LoadedFlow } from '../../oauth/authorize/engine.js';
import { amrOfPasskey, minimumAcr } from '../../oauth/authorize/acr.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import type { OAuthServer } from '../../oauth/compose.js';
import { cookieNames, safeReturnTo } from '../../screens/cookies.js';
import { Html } from '../../screens/html.js';
import { en, type MessageKey, type Translator } from '../../screens/i18n/index.js';
import { challengePage, mfaPage, recoveryCodesPage, totpPage } from '../../screens/mfa/pages.js';
import { loginPage } from '../../screens/pages.js';
import { browserBinding, type MfaService } from '../../screens/mfa/service.js';
import { WEBAUTHN_SCRIPT } from '../../screens/mfa/webauthn-script.js';
import type { SigninService } from '../../screens/service.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { seeOther, sendErrorPage, sendOutcome } from './outcome.js';
import { currentSession, enrollingSession, sessionToken, setSessionCookie } from './session-cookie.js';

export interface MfaRoutesOptions {
  oauth: Pick<OAuthServer, 'authorize'>;
  signin: SigninService;
  mfa: MfaService;
}

/** A session that may add a sign-in method (see `enroller`). */
interface Enroller {
  session: SessionRecord;
  /** A sign-in waiting for its (first) second factor, not yet a usable session. */
  pending: boolean;
  /** Login at most 5 minutes old (always, for a pending sign-in). */
  fresh: boolean;
}

const FLOW_GONE = en['error.flow_gone'];

export async function mfaRoutes(app: FastifyInstance, opts: MfaRoutesOptions): Promise<void> {
  const { oauth, signin, mfa } = opts;
  const binding = (request: FastifyRequest) => browserBinding(request.cookies[cookieNames(tenantOf(request).issuer).csrf]);
  const meta = (request: FastifyRequest) => ({ ip: request.ip, userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null });
  const flowOf = (request: FastifyRequest, source: unknown) => oauth.authorize.load(field(source, 'flow'), tenantOf(request));
  const returnToOf = (request: FastifyRequest, source: unknown) => safeReturnTo(field(source, 'return_to'), tenantOf(request).issuer);
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());
  const pendingSession = (request: FastifyRequest) => signin.pending(tenantOf(request).id, sessionToken(request));
  const formTargets = (flow: LoadedFlow | undefined) => (flow ? [flow.flow.request.redirectUri] : []);
  const withContext = (path: string, flow: LoadedFlow | undefined, returnTo: string | undefined) => {
    const q = new URLSearchParams({ ...(flow ? { flow: flow.id } : {}), ...(returnTo ? { return_to: returnTo } : {}) }).toString();
    return q ? `${path}?${q}` : path;
  };

  /** Where a completed sign-in goes: the flow continues, or the return_to path, or /sessions. */
  const finish = async (request: FastifyRequest, reply: FastifyReply, flow: LoadedFlow | undefined, returnTo: string | undefined, session: SessionRecord) => {
    if (!flow) return seeOther(reply, returnTo ?? '/sessions');
    return sendOutcome(request, reply, await oauth.authorize.continue(flow, tenantOf(request), session, { consented: false }));
  };

  app.get('/webauthn.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').header('x-content-type-options', 'nosniff').send(WEBAUTHN_SCRIPT),
  );

  // ------------------------------------------------------------ passkey sign-in on /login

  app.post('/login/passkey/options', async (request) => {
    if (!csrfOk(request)) throw errors.csrfFailed();
    return mfa.authenticationOptions(tenantOf(request), binding(request), 'login', null);
  });

  app.post('/login/passkey', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const flowParam = field(request.body, 'flow');
    const flow = flowParam === undefined ? undefined : await flowOf(request, request.body);
    if (flowParam !== undefined && !flow) return sendErrorPage(request, reply, errors.pageExpired(FLOW_GONE));
    const returnTo = returnToOf(request, request.body);
    const result = await mfa.authenticatePasskey(tenant, binding(request), field(request.body, 'credential'), 'login', null, meta(request));
    if (result.kind !== 'ok') {
      const csrf = csrfFor(request, reply);
      const brand = await signin.brand(tenant.id, flow?.flow.request.organizationId);
      return sendPage(reply, 401, { title: 'title.sign_in', uiLocales: flow?.flow.request.uiLocales, brand, formTargets: formTargets(flow), script: true }, (f) =>
        loginPage(f, { csrf, flow: flow?.id, returnTo, message: f.t.known(result.message, 'passkey.sign_in_failed'), clientName: flow?.client.clientName }),
      );
    }
    const login = await signin.passkeyLogin(tenant.id, result.user, meta(request), result.amr, result.passkey.id, sessionToken(request));
    if (login.kind !== 'ok') return sendErrorPage(request, reply, errors.serverError());
    setSessionCookie(request, reply, login.token, signin.settings.sessionMaxSeconds);
    return finish(request, reply, flow, returnTo, login.session);
  });

  // ------------------------------------------------------------ /mfa overview and passkeys

  /** `message`: a catalogue key, or a service's English refusal (shown as the catalogue's message it is). */
  const renderMfa = async (request: FastifyRequest, reply: FastifyReply, session: SessionRecord, status: number, extra: { message?: Message } = {}) => {
    const tenant = tenantOf(request);
    const user = await signin.user(tenant.id, session.userId);
    const f = await mfa.factors(tenant.id, session.userId);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, status, { title: 'title.mfa', script: true }, (frame) =>
      mfaPage(frame, { csrf, email: user?.email ?? '', fresh: mfa.fresh(session), passkeys: f.passkeys, totp: f.totp, recoveryCodes: f.recoveryCodes, message: textOf(frame.t, extra.message) }),
    );
  };

  /** The signed-in session, or a redirect to the login page that comes back to /mfa. */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply): Promise<SessionRecord | undefined> => {
    const s = await currentSession(signin, request);
    if (!s) seeOther(reply, '/login?return_to=%2Fmfa');
    return s;
  };

  /**
   * Who may add a factor: a signed-in user (`fresh` when the login is at most 5 minutes old), or a
   * pending sign-in that owes a second factor its user does not have yet (the policy's
   * `required`, or a step-up), which enrols one to continue.
   */
  const enroller = async (request: FastifyRequest): Promise<Enroller | undefined> => {
    const e = await enrollingSession(signin, mfa, request);
    return e && { ...e, fresh: e.pending || mfa.fresh(e.session) };
  };

  /**
   * The checks before a form POST on the user's sign-in methods, in order: the CSRF token; a
   * session (else the login page, coming back to /mfa) — a pending sign-in only when `enrolment`;
   * when `freshFor` names the action, a login at most 5 minutes old (else /mfa says so).
   * Undefined once it has answered.
   */
  const guarded = async (request: FastifyRequest, reply: FastifyReply, opts: { freshFor?: MessageKey; enrolment?: boolean } = {}): Promise<Enroller | undefined> => {
    if (!csrfOk(request)) {
      await rejectCsrf(request, reply);
      return undefined;
    }
    const e = await enroller(request);
    if (!e || (e.pending && !opts.enrolment)) {
      seeOther(reply, '/login?return_to=%2Fmfa');
      return undefined;
    }
    if (opts.freshFor && !e.fresh) {
      await renderMfa(request, reply, e.session, 403, { message: { key: 'mfa.confirm_first', parts: { action: opts.freshFor } } });
      return undefined;
    }
    return e;
  };

  app.get('/mfa', async (request, reply) => {
    const s = await signedIn(request, reply);
    return s ? renderMfa(request, reply, s, 200) : reply;
  });

  /** Creation options for a signed-in user with a fresh login, or a pending sign-in enrolling its first factor. */
  app.post('/mfa/passkeys/options', async (request) => {
    if (!csrfOk(request)) throw errors.csrfFailed();
    const e = await enroller(request);
    if (!e) throw errors.forbidden('sign in first');
    if (!e.fresh) throw errors.forbidden('sign in again to add a passkey (your login is more than 5 minutes old)');
    const user = await signin.user(tenantOf(request).id, e.session.userId);
    if (!user) throw errors.forbidden('sign in first');
    return mfa.registrationOptions(tenantOf(request), user, binding(request));
  });

  app.post('/mfa/passkeys', async (request, reply) => {
    const e = await guarded(request, reply, { freshFor: 'mfa.action_add_passkey', enrolment: true });
    if (!e) return reply;
    const tenant = tenantOf(request);
    const flow = e.pending ? await flowOf(request, request.body) : undefined;
    const returnTo = e.pending ? returnToOf(request, request.body) : undefined;
    const refuse = (status: number, message: Message) =>
      e.pending ? renderChallenge(request, reply, e.session, status, { flow, returnTo }, message) : renderMfa(request, reply, e.session, status, { message });
    const user = await signin.user(tenant.id, e.session.userId);
    if (!user) return seeOther(reply, '/login?return_to=%2Fmfa');
    const r = await mfa.registerPasskey(tenant, user, binding(request), field(request.body, 'credential'), field(request.body, 'name'));
    if (r.kind === 'rejected') return refuse(403, { english: r.message, fallback: 'passkey.not_verified' });
    if (r.kind === 'invalid') return refuse(400, { english: r.message, fallback: 'passkey.not_verified' });
    if (!e.pending) return seeOther(reply, '/mfa');
    // The first factor of a sign-in that owes one: the new passkey (user verification was required) completes it.
    const done = await signin.completeSecondFactor(tenant.id, e.session, amrOfPasskey(r.passkey, true));
    if (!done) return seeOther(reply, withContext('/login', flow, returnTo));
    return finish(request, reply, flow, returnTo, done);
  });

  app.post('/mfa/passkeys/rename', async (request, reply) => {
    const e = await guarded(request, reply);
    if (!e) return reply;
    if (!(await mfa.renamePasskey(tenantOf(request).id, e.session.userId, field(request.body, 'passkey_id') ?? '', field(request.body, 'name') ?? ''))) {
      return renderMfa(request, reply, e.session, 400, { message: 'mfa.rename_failed' });
    }
    return seeOther(reply, '/mfa');
  });

  app.post('/mfa/passkeys/remove', async (request, reply) => {
    const e = await guarded(request, reply, { freshFor: 'mfa.action_remove_passkey' });
    if (!e) return reply;
    if (!(await mfa.removePasskey(tenantOf(request).id, e.session.userId, field(request.body, 'passkey_id') ?? ''))) {
      return renderMfa(request, reply, e.session, 404, { message: 'mfa.no_such_passkey' });
    }
    return seeOther(reply, '/mfa');
  });

  // ------------------------------------------------------------ authenticator app and recovery codes

  /** TOTP enrolment: an enroller with a fresh login (a stale one signs in again first). */
  const enrolling = async (request: FastifyRequest): Promise<Enroller | undefined> => {
    const e = await enroller(request);
    return e?.fresh ? e : undefined;
  };

  const renderTotp = async (request: FastifyRequest, reply: FastifyReply, session: SessionRecord, status: number, context: { flow?: LoadedFlow; returnTo?: string }, message?: MessageKey) => {
    const tenant = tenantOf(request);
    const user = await signin.user(tenant.id, session.userId);
    const enrolment = user ? await mfa.totpEnrolment(tenant.id, user, new URL(tenant.issuer).host) : undefined;
    const csrf = csrfFor(request, reply);
    return sendPage(reply, status, { title: 'title.totp', uiLocales: context.flow?.flow.request.uiLocales, formTargets: formTargets(context.flow) }, (f) =>
      totpPage(f, { csrf, flow: context.flow?.id, returnTo: context.returnTo, enrolment, message: message && f.t(message) }, enrolment ? new Html(enrolment.svg) : undefined),
    );
  };

  app.get('/mfa/totp', async (request, reply) => {
    const e = await enrolling(request);
    if (!e) return seeOther(reply, '/login?return_to=%2Fmfa%2Ftotp&reauth=1');
    return renderTotp(request, reply, e.session, 200, { flow: await flowOf(request, request.query), returnTo: returnToOf(request, request.query) });
  });

  app.post('/mfa/totp/start', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const e = await enrolling(request);
    if (!e) return seeOther(reply, '/login?return_to=%2Fmfa%2Ftotp&reauth=1');
    const flow = await flowOf(request, request.body);
    const returnTo = returnToOf(request, request.body);
    if (!(await mfa.startTotp(tenantOf(request).id, e.session.userId))) return seeOther(reply, '/mfa');
    return seeOther(reply, withContext('/mfa/totp', flow, returnTo));
  });

  app.post('/mfa/totp/confirm', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const e = await enrolling(request);
    if (!e) return seeOther(reply, '/login?return_to=%2Fmfa%2Ftotp&reauth=1');
    const tenant = tenantOf(request);
    const flow = await flowOf(request, request.body);
    const returnTo = returnToOf(request, request.body);
    const r = await mfa.confirmTotp(tenant.id, e.session.userId, field(request.body, 'code') ?? '');
    if (r.kind === 'limited') {
      reply.header('retry-after', String(r.retryAfterSeconds));
      return renderTotp(request, reply, e.session, 429, { flow, returnTo }, 'totp.too_many');
    }
    if (r.kind === 'invalid') return renderTotp(request, reply, e.session, 400, { flow, returnTo }, 'totp.wrong');
    if (e.pending) await signin.completeSecondFactor(tenant.id, e.session, ['otp']);
    const next = e.pending ? withContext('/mfa/continue', flow, returnTo) : '/mfa';
    if (!r.recoveryCodes) return e.pending ? continueNow(request, reply, flow, returnTo) : seeOther(reply, next);
    // The codes are shown once, in the answer to this POST (never stored in clear, never shown again).
    return sendPage(reply, 200, { title: 'title.recovery_codes', uiLocales: flow?.flow.request.uiLocales }, (f) => recoveryCodesPage(f, { codes: r.recoveryCodes!, next }));
  });

  app.post('/mfa/totp/remove', async (request, reply) => {
    const e = await guarded(request, reply, { freshFor: 'mfa.action_remove_totp' });
    if (!e) return reply;
    await mfa.removeTotp(tenantOf(request).id, e.session.userId);
    return seeOther(reply, '/mfa');
  });

  app.post('/mfa/recovery-codes', async (request, reply) => {
    const e = await guarded(request, reply, { freshFor: 'mfa.action_recovery_codes' });
    if (!e) return reply;
    const codes = await mfa.regenerateRecoveryCodes(tenantOf(request).id, e.session.userId);
    return sendPage(reply, 200, { title: 'title.recovery_codes' }, (f) => recoveryCodesPage(f, { codes, next: '/mfa' }));
  });

  /** After an enrolment during sign-in: the flow continues (a GET link target that issues nothing by itself). */
  const continueNow = async (request: FastifyRequest, reply: FastifyReply, flow: LoadedFlow | undefined, returnTo: string | undefined) => {
    const s = await currentSession(signin, request);
    if (!s) return seeOther(reply, withContext('/login', flow, returnTo));
    return finish(request, reply, flow, returnTo, s);
  };

  app.get('/mfa/continue', async (request, reply) => continueNow(request, reply, await flowOf(request, request.query), returnToOf(request, request.query)));

  // ------------------------------------------------------------ the second factor at sign-in

  const renderChallenge = async (request: FastifyRequest, reply: FastifyReply, session: SessionRecord, status: number, context: { flow?: LoadedFlow; returnTo?: string }, message?: Message) => {
    const tenant = tenantOf(request);
    const f = await mfa.factors(tenant.id, session.userId);
    const brand = await signin.brand(tenant.id, context.flow?.flow.request.organizationId);
    const csrf = csrfFor(request, reply);
    const passkeyOnly = minimumAcr(context.flow?.flow.request.acrValues) === 'phr';
    return sendPage(reply, status, { title: 'title.challenge', uiLocales: context.flow?.flow.request.uiLocales, brand, formTargets: formTargets(context.flow), script: true }, (frame) =>
      challengePage(frame, {
        csrf,
        flow: context.flow?.id,
        returnTo: context.returnTo,
        totp: f.totp,
        passkeys: f.passkeys.length > 0,
        enrol: !f.totp && f.passkeys.length === 0,
        passkeyOnly,
        message: textOf(frame.t, message),
      }),
    );
  };

  app.get('/mfa/challenge', async (request, reply) => {
    const p = await pendingSession(request);
    const flow = await flowOf(request, request.query);
    const returnTo = returnToOf(request, request.query);
    if (!p) return seeOther(reply, withContext('/login', flow, returnTo));
    return renderChallenge(request, reply, p, 200, { flow, returnTo });
  });

  app.post('/mfa/challenge', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const p = await pendingSession(request);
    const flow = await flowOf(request, request.body);
    const returnTo = returnToOf(request, request.body);
    if (!p) return seeOther(reply, withContext('/login', flow, returnTo));
    if (minimumAcr(flow?.flow.request.acrValues) === 'phr') return renderChallenge(request, reply, p, 400, { flow, returnTo }, 'challenge.passkey_only');
    const code = field(request.body, 'code');
    const recovery = field(request.body, 'recovery_code');
    const r = await mfa.checkCode(tenant.id, p.userId, code ? { totp: code } : { recovery: recovery ?? '' }, { ip: request.ip });
    if (r.kind === 'limited') {
      reply.header('retry-after', String(r.retryAfterSeconds));
      return renderChallenge(request, reply, p, 429, { flow, returnTo }, 'totp.too_many');
    }
    if (r.kind === 'invalid') return renderChallenge(request, reply, p, 401, { flow, returnTo }, 'challenge.wrong');
    const done = await signin.completeSecondFactor(tenant.id, p, r.amr);
    if (!done) return seeOther(reply, withContext('/login', flow, returnTo));
    return finish(request, reply, flow, returnTo, done);
  });

  app.post('/mfa/challenge/passkey/options', async (request) => {
    if (!csrfOk(request)) throw errors.csrfFailed();
    const p = await pendingSession(request);
    if (!p) throw errors.forbidden('sign in with your password first');
    return mfa.authenticationOptions(tenantOf(request), binding(request), 'second_factor', p.userId);
  });

  app.post('/mfa/challenge/passkey', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const p = await pendingSession(request);
    const flow = await flowOf(request, request.body);
    const returnTo = returnToOf(request, request.body);
    if (!p) return seeOther(reply, withContext('/login', flow, returnTo));
    const r = await mfa.authenticatePasskey(tenant, binding(request), field(request.body, 'credential'), 'second_factor', p.userId, { ip: request.ip });
    if (r.kind !== 'ok') return renderChallenge(request, reply, p, 401, { flow, returnTo }, { english: r.message, fallback: 'passkey.sign_in_failed' });
    await mfa.challengeSucceeded(tenant.id, p.userId, 'passkey', request.ip);
    const done = await signin.completeSecondFactor(tenant.id, p, r.amr);
    if (!done) return seeOther(reply, withContext('/login', flow, returnTo));
    return finish(request, reply, flow, returnTo, done);
  });
}

/**
 * A page's message: a catalogue key (its placeholders filled with other messages), or a service's
 * English refusal, shown as the catalogue's message it is (else `fallback` outside English).
 */
type Message = MessageKey | { key: MessageKey; parts: Record<string, MessageKey> } | { english: string; fallback: MessageKey };

function textOf(t: Translator, m: Message | undefined): string | undefined {
  if (m === undefined) return undefined;
  if (typeof m === 'string') return t(m);
  if ('english' in m) return t.known(m.english, m.fallback);
  return t(m.key, Object.fromEntries(Object.entries(m.parts).map(([name, key]) => [name, t(key)])));
}

/** Where the password step sends a user who owes a second factor. */
export function challengeLocation(flowId: string | undefined, returnTo: string | undefined): string {
  const q = new URLSearchParams({ ...(flowId ? { flow: flowId } : {}), ...(returnTo ? { return_to: returnTo } : {}) }).toString();
  return q ? `/mfa/challenge?${q}` : '/mfa/challenge';
}
