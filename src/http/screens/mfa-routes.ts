/**
 * Passkeys and second factors on the hosted screens: passkey sign-in on /login, the /mfa pages
 * (passkeys, authenticator app, recovery codes), the sign-in challenge /mfa/challenge, and the
 * /webauthn.js script. GETs change nothing; form POSTs check CSRF and answer 303 (or the page with
 * its message); the WebAuthn options endpoints check the same CSRF token and answer JSON.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { Html } from '../../screens/html.js';
import { mfaPage, recoveryCodesPage, totpPage } from '../../screens/mfa/pages.js';
import type { MfaService } from '../../screens/mfa/service.js';
import { type Message, type MessageKey, textOf } from '../../screens/i18n/index.js';
import { WEBAUTHN_SCRIPT } from '../../screens/mfa/webauthn-script.js';
import type { SigninService } from '../../screens/service.js';
import { pageUrl } from '../../signin/context.js';
import type { SigninEngine } from '../../signin/engine.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { seeOther, sendErrorPage, sendSignin } from './outcome.js';
import { flowRefOf } from './routes.js';
import { browserOf, currentSession, enrollingSession } from './session-cookie.js';

export interface MfaRoutesOptions {
  signin: SigninService;
  mfa: MfaService;
  engine: SigninEngine;
}

/** A session that may add a sign-in method (see `enroller`). */
interface Enroller {
  session: SessionRecord;
  /** A sign-in waiting for its (first) second factor, not yet a usable session. */
  pending: boolean;
  /** Login at most 5 minutes old (always, for a pending sign-in). */
  fresh: boolean;
}

export async function mfaRoutes(app: FastifyInstance, opts: MfaRoutesOptions): Promise<void> {
  const { signin, mfa, engine } = opts;
  const binding = (request: FastifyRequest) => browserOf(request).webauthnBinding;
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());
  /** The sign-in context a page carries on (the authenticator-app enrolment), checked by the engine. */
  const carried = (request: FastifyRequest, source: unknown) => engine.carried(tenantOf(request), flowRefOf(source));

  app.get('/webauthn.js', async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('x-content-type-options', 'nosniff')
      .send(WEBAUTHN_SCRIPT),
  );

  // ------------------------------------------------------------ passkey sign-in on /login

  app.post('/login/passkey/options', async (request) => {
    if (!csrfOk(request)) throw errors.csrfFailed();
    return mfa.authenticationOptions(tenantOf(request), binding(request), 'login', null);
  });

  app.post('/login/passkey', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    return sendSignin(request, reply, await engine.passkey(tenantOf(request), flowRefOf(request.body), field(request.body, 'credential'), browserOf(request)));
  });

  // ------------------------------------------------------------ /mfa overview and passkeys

  /** `message`: a catalogue key, or a service's English refusal (shown as the catalogue's message it is). */
  const renderMfa = async (request: FastifyRequest, reply: FastifyReply, session: SessionRecord, status: number, extra: { message?: Message } = {}) => {
    const tenant = tenantOf(request);
    const user = await signin.user(tenant.id, session.userId);
    const f = await mfa.factors(tenant.id, session.userId);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, status, { title: 'title.mfa', script: true }, (frame) =>
      mfaPage(frame, {
        csrf,
        email: user?.email ?? '',
        fresh: mfa.fresh(session),
        passkeys: f.passkeys,
        totp: f.totp,
        recoveryCodes: f.recoveryCodes,
        message: textOf(frame.t, extra.message),
      }),
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
  const guarded = async (
    request: FastifyRequest,
    reply: FastifyReply,
    opts: { freshFor?: MessageKey; enrolment?: boolean } = {},
  ): Promise<Enroller | undefined> => {
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
    const ref = flowRefOf(request.body);
    const refuse = async (status: number, message: Message) =>
      e.pending
        ? sendSignin(request, reply, await engine.refuseChallenge(tenant, ref, e.session, status, message))
        : renderMfa(request, reply, e.session, status, { message });
    const user = await signin.user(tenant.id, e.session.userId);
    if (!user) return seeOther(reply, '/login?return_to=%2Fmfa');
    const r = await mfa.registerPasskey(tenant, user, binding(request), field(request.body, 'credential'), field(request.body, 'name'));
    if (r.kind === 'rejected') return refuse(403, { english: r.message, fallback: 'passkey.not_verified' });
    if (r.kind === 'invalid') return refuse(400, { english: r.message, fallback: 'passkey.not_verified' });
    if (!e.pending) return seeOther(reply, '/mfa');
    // The first factor of a sign-in that owes one: the new passkey (user verification was required) completes it.
    return sendSignin(request, reply, await engine.enrolled(tenant, ref, e.session, { passkey: r.passkey }));
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

  const renderTotp = async (request: FastifyRequest, reply: FastifyReply, session: SessionRecord, status: number, source: unknown, message?: MessageKey) => {
    const tenant = tenantOf(request);
    const context = await carried(request, source);
    const user = await signin.user(tenant.id, session.userId);
    const enrolment = user ? await mfa.totpEnrolment(tenant.id, user, new URL(tenant.issuer).host) : undefined;
    const csrf = csrfFor(request, reply);
    return sendPage(reply, status, { title: 'title.totp', uiLocales: context.uiLocales, formTargets: context.formTargets }, (f) =>
      totpPage(
        f,
        { csrf, flow: context.flow, returnTo: context.returnTo, enrolment, message: message && f.t(message) },
        enrolment ? new Html(enrolment.svg) : undefined,
      ),
    );
  };

  app.get('/mfa/totp', async (request, reply) => {
    const e = await enrolling(request);
    if (!e) return seeOther(reply, '/login?return_to=%2Fmfa%2Ftotp&reauth=1');
    return renderTotp(request, reply, e.session, 200, request.query);
  });

  app.post('/mfa/totp/start', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const e = await enrolling(request);
    if (!e) return seeOther(reply, '/login?return_to=%2Fmfa%2Ftotp&reauth=1');
    const context = await carried(request, request.body);
    if (!(await mfa.startTotp(tenantOf(request).id, e.session.userId))) return seeOther(reply, '/mfa');
    return seeOther(reply, pageUrl('/mfa/totp', { returnTo: context.returnTo, flow: context.flow ? { handle: context.flow } : undefined }));
  });

  app.post('/mfa/totp/confirm', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const e = await enrolling(request);
    if (!e) return seeOther(reply, '/login?return_to=%2Fmfa%2Ftotp&reauth=1');
    const tenant = tenantOf(request);
    const r = await mfa.confirmTotp(tenant.id, e.session.userId, field(request.body, 'code') ?? '');
    if (r.kind === 'limited') {
      reply.header('retry-after', String(r.retryAfterSeconds));
      return renderTotp(request, reply, e.session, 429, request.body, 'totp.too_many');
    }
    if (r.kind === 'invalid') return renderTotp(request, reply, e.session, 400, request.body, 'totp.wrong');
    if (!e.pending)
      return r.recoveryCodes
        ? sendPage(reply, 200, { title: 'title.recovery_codes' }, (f) => recoveryCodesPage(f, { codes: r.recoveryCodes!, next: '/mfa' }))
        : seeOther(reply, '/mfa');
    // The codes are shown once, in the answer to this POST (never stored in clear, never shown
    // again); then the sign-in goes on from their page's link.
    const { uiLocales } = await carried(request, request.body);
    const outcome = await engine.enrolled(tenant, flowRefOf(request.body), e.session, 'totp', { pause: r.recoveryCodes !== undefined });
    if (!r.recoveryCodes || outcome.kind !== 'redirect') return sendSignin(request, reply, outcome);
    const next = outcome.location;
    return sendPage(reply, 200, { title: 'title.recovery_codes', uiLocales }, (f) => recoveryCodesPage(f, { codes: r.recoveryCodes!, next }));
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
  app.get('/mfa/continue', async (request, reply) =>
    sendSignin(request, reply, await engine.resume(tenantOf(request), flowRefOf(request.query), browserOf(request))),
  );

  // ------------------------------------------------------------ the second factor at sign-in

  app.get('/mfa/challenge', async (request, reply) =>
    sendSignin(request, reply, await engine.showChallenge(tenantOf(request), flowRefOf(request.query), browserOf(request))),
  );

  app.post('/mfa/challenge', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const input = { code: field(request.body, 'code'), recoveryCode: field(request.body, 'recovery_code') };
    return sendSignin(request, reply, await engine.secondFactorCode(tenantOf(request), flowRefOf(request.body), input, browserOf(request)));
  });

  app.post('/mfa/challenge/passkey/options', async (request) => {
    if (!csrfOk(request)) throw errors.csrfFailed();
    const p = await signin.pending(tenantOf(request).id, browserOf(request).sessionToken);
    if (!p) throw errors.forbidden('sign in with your password first');
    return mfa.authenticationOptions(tenantOf(request), binding(request), 'second_factor', p.userId);
  });

  app.post('/mfa/challenge/passkey', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    return sendSignin(
      request,
      reply,
      await engine.secondFactorPasskey(tenantOf(request), flowRefOf(request.body), field(request.body, 'credential'), browserOf(request)),
    );
  });
}
