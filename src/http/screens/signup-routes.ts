/**
 * The hosted pages of sign-up and passwordless sign-in by email (docs/signup.md): /signup, its
 * code and its link; /login/email ("email me a code"), its code and its link. A GET never uses a
 * token (mail scanners open links); every POST checks CSRF. A refusal re-renders the page with its
 * status and its error code (`data-error`); a limit answers 429 with Retry-After.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LINK_INVALID } from '../../email/service.js';
import { AppError, errors } from '../../kernel/errors.js';
import { en } from '../../screens/i18n/index.js';
import { emailCodePage, emailLinkPage, signupPage } from '../../screens/signup-pages.js';
import type { SigninEngine } from '../../signin/engine.js';
import type { Continuation, EmailSigninService, Refusal } from '../../signup/service.js';
import type { ChallengePurpose } from '../../storage/repos/signup.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { pageTranslator, sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { sendErrorPage, sendSignin } from './outcome.js';
import { flowRefOf } from './routes.js';
import { browserOf } from './session-cookie.js';

export interface SignupRoutesOptions {
  engine: SigninEngine;
  emailSignin: EmailSigninService;
}

const PATHS: Record<ChallengePurpose, { code: string; link: string; start: string }> = {
  signup: { code: '/signup/code', link: '/signup/verify', start: '/signup' },
  signin: { code: '/login/email/code', link: '/login/email/verify', start: '/login' },
};

/** A page of the sign-in keeping its context (the flow, or a same-site return_to). */
function withContext(path: string, c: Continuation): string {
  const q = new URLSearchParams();
  if (c.flow && /^flw_[A-Za-z0-9_-]{1,100}$/.test(c.flow)) q.set('flow', c.flow);
  else if (c.returnTo && c.returnTo.startsWith('/') && !c.returnTo.startsWith('//')) q.set('return_to', c.returnTo);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export async function signupRoutes(app: FastifyInstance, opts: SignupRoutesOptions): Promise<void> {
  const { engine, emailSignin } = opts;
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());
  const token = (source: unknown) => (field(source, 'token') ?? '').slice(0, 200);
  /** The flow's redirect_uri (a form here may end there) and ui_locales. */
  const frame = async (request: FastifyRequest, ref: Continuation) => {
    const c = await engine.carried(tenantOf(request), ref);
    return { formTargets: c.formTargets, uiLocales: c.uiLocales, ref: { flow: c.flow, returnTo: c.returnTo } };
  };
  const locale = async (request: FastifyRequest, uiLocales: readonly string[] | null) => (await pageTranslator(request, uiLocales)).locale;

  const limited = (reply: FastifyReply, retryAfterSeconds: number) => reply.header('retry-after', String(retryAfterSeconds));

  async function showSignup(request: FastifyRequest, reply: FastifyReply, ref: Continuation, status = 200, email?: string, refusal?: Refusal) {
    const f = await frame(request, ref);
    const csrf = csrfFor(request, reply);
    const message = refusal ? (refusal.kind === 'limited' ? 'signup.too_many' : refusal.message) : undefined;
    const error = refusal ? (refusal.kind === 'limited' ? 'rate_limited' : refusal.error) : undefined;
    const domains = (await emailSignin.policy(tenantOf(request).id)).signupDomains.join(', ');
    return sendPage(reply, status, { title: 'title.sign_up', formTargets: f.formTargets, uiLocales: f.uiLocales }, (p) =>
      signupPage(p, {
        csrf,
        ...f.ref,
        email,
        loginHref: withContext('/login', f.ref),
        ...(message ? { message: p.t(message, { domains }), error } : {}),
      }),
    );
  }

  async function showCode(
    request: FastifyRequest,
    reply: FastifyReply,
    v: { purpose: ChallengePurpose; challenge: string; ref: Continuation; status?: number; intro: 'signup' | 'signin' | 'other_browser'; email?: string },
    refusal?: Refusal,
  ) {
    const f = await frame(request, v.ref);
    const csrf = csrfFor(request, reply);
    const message = refusal ? (refusal.kind === 'limited' ? 'signup.too_many' : refusal.message) : undefined;
    const error = refusal ? (refusal.kind === 'limited' ? 'rate_limited' : refusal.error) : undefined;
    return sendPage(reply, v.status ?? 200, { title: 'title.email_code', formTargets: f.formTargets, uiLocales: f.uiLocales }, (p) =>
      emailCodePage(p, {
        csrf,
        ...f.ref,
        action: PATHS[v.purpose].code,
        challenge: v.challenge,
        intro: p.t(`code.intro_${v.intro}`, { email: v.email ?? '' }),
        againHref: withContext(PATHS[v.purpose].start, f.ref),
        ...(message ? { message: p.t(message), error } : {}),
      }),
    );
  }

  // ---------------------------------------------------------------- sign-up

  app.get('/signup', async (request, reply) => {
    const tenant = tenantOf(request);
    if (!(await emailSignin.offers(tenant.id)).signup) return sendErrorPage(request, reply, new AppError(403, 'access_denied', en['signup.off']));
    return showSignup(request, reply, flowRefOf(request.query));
  });

  app.post('/signup', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const ref = flowRefOf(request.body);
    const email = (field(request.body, 'email') ?? '').slice(0, 254);
    const browser = browserOf(request);
    const f = await frame(request, ref);
    const r = await emailSignin.startSignup(
      tenant,
      { email, password: field(request.body, 'password') ?? '', passwordRepeat: field(request.body, 'password_repeat') ?? '' },
      { ip: browser.ip, binding: browser.webauthnBinding },
      f.ref,
      await locale(request, f.uiLocales),
    );
    switch (r.kind) {
      case 'accepted':
        return sendSignin(request, reply, await engine.emailSignedIn(tenant, f.ref, r, browser));
      case 'sent':
        return showCode(request, reply, { purpose: 'signup', challenge: r.challengeId, ref: f.ref, intro: 'signup', email: r.email });
      case 'limited':
        limited(reply, r.retryAfterSeconds);
        return showSignup(request, reply, ref, 429, email, r);
      case 'refused':
        return showSignup(request, reply, ref, r.status, email, r);
    }
  });

  // ---------------------------------------------------------------- passwordless

  app.post('/login/email', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const email = (field(request.body, 'email') ?? '').slice(0, 254);
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) return sendErrorPage(request, reply, errors.invalidRequest('email: must be an email address'));
    const browser = browserOf(request);
    const f = await frame(request, flowRefOf(request.body));
    const r = await emailSignin.startPasswordless(
      tenant,
      email,
      { ip: browser.ip, binding: browser.webauthnBinding },
      f.ref,
      await locale(request, f.uiLocales),
    );
    switch (r.kind) {
      case 'sent':
        return showCode(request, reply, { purpose: 'signin', challenge: r.challengeId, ref: f.ref, intro: 'signin', email: r.email });
      case 'limited':
        return sendErrorPage(request, reply, errors.tooManyRequests(r.retryAfterSeconds));
      case 'refused':
        return sendErrorPage(request, reply, new AppError(r.status, r.error, en[r.message]));
      case 'accepted':
        throw new Error('a passwordless start never signs in');
    }
  });

  // ---------------------------------------------------------------- codes and links (both purposes)

  for (const purpose of ['signup', 'signin'] as const) {
    const paths = PATHS[purpose];

    app.post(paths.code, async (request, reply) => {
      if (!csrfOk(request)) return rejectCsrf(request, reply);
      const tenant = tenantOf(request);
      const ref = flowRefOf(request.body);
      const challenge = (field(request.body, 'challenge') ?? '').slice(0, 80);
      const f = await frame(request, ref);
      const r = await emailSignin.code(
        tenant,
        purpose,
        challenge,
        (field(request.body, 'code') ?? '').slice(0, 20),
        request.ip,
        await locale(request, f.uiLocales),
      );
      if (r.kind === 'accepted') return sendSignin(request, reply, await engine.emailSignedIn(tenant, f.ref, r, browserOf(request)));
      if (r.kind === 'limited') limited(reply, r.retryAfterSeconds);
      const status = r.kind === 'limited' ? 429 : r.status;
      return showCode(request, reply, { purpose, challenge, ref: f.ref, status, intro: purpose }, r);
    });

    app.get(paths.link, async (request, reply) => {
      const t = token(request.query);
      if (!(await emailSignin.linkValid(tenantOf(request).id, t, purpose))) return sendErrorPage(request, reply, errors.invalidRequest(LINK_INVALID));
      const csrf = csrfFor(request, reply);
      return sendPage(reply, 200, { title: 'title.email_code' }, (p) => emailLinkPage(p, { csrf, action: paths.link, token: t }));
    });

    app.post(paths.link, async (request, reply) => {
      if (!csrfOk(request)) return rejectCsrf(request, reply);
      const tenant = tenantOf(request);
      const browser = browserOf(request);
      const r = await emailSignin.link(tenant, purpose, token(request.body), browser.webauthnBinding, await locale(request, null));
      if (r.kind === 'invalid') return sendErrorPage(request, reply, errors.invalidRequest(LINK_INVALID));
      // Another browser than the one that asked: nothing is signed in by the link; the code is asked for.
      if (r.kind === 'code') return showCode(request, reply, { purpose, challenge: r.challengeId, ref: {}, intro: 'other_browser' });
      return sendSignin(request, reply, await engine.emailSignedIn(tenant, r.context ?? {}, r, browser));
    });
  }
}
