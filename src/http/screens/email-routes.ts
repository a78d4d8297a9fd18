/**
 * The hosted pages of email links (docs/email.md): /verify-email (a link's page, then a POST
 * that uses it), /verify-email/code, /login/forgot and /reset-password. A GET never uses a token
 * (mail scanners open links); tokens travel in the query, which the access log never writes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type EmailService, LINK_INVALID, PASSWORD_LENGTH } from '../../email/service.js';
import { errors, isAppError } from '../../kernel/errors.js';
import { forgotPage, forgotSentPage, resetDonePage, resetPage, verifiedPage, verifyCodePage, verifyLinkPage } from '../../screens/email-pages.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { pageTranslator, sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { sendErrorPage } from './outcome.js';

export interface EmailRoutesOptions {
  email: EmailService;
}

/** Back to the sign-in the page came from (a flow or a return_to on this site), else /login. */
function loginHref(source: unknown): string {
  const flow = field(source, 'flow');
  const returnTo = field(source, 'return_to');
  const q = new URLSearchParams();
  if (flow && /^flw_[A-Za-z0-9_-]{1,100}$/.test(flow)) q.set('flow', flow);
  else if (returnTo && returnTo.startsWith('/') && !returnTo.startsWith('//')) q.set('return_to', returnTo);
  const s = q.toString();
  return s ? `/login?${s}` : '/login';
}

export async function emailScreenRoutes(app: FastifyInstance, opts: EmailRoutesOptions): Promise<void> {
  const { email } = opts;
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());
  const token = (source: unknown) => (field(source, 'token') ?? '').slice(0, 200);

  app.get('/verify-email', async (request, reply) => {
    const t = token(request.query);
    if (!(await email.linkValid(tenantOf(request).id, t, 'verify_email'))) return sendErrorPage(request, reply, errors.invalidRequest(LINK_INVALID));
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.verify_email' }, (f) => verifyLinkPage(f, { csrf, token: t }));
  });

  app.post('/verify-email', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    try {
      await email.verifyLink(tenantOf(request).id, token(request.body));
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
    return sendPage(reply, 200, { title: 'title.verify_email' }, (f) => verifiedPage(f));
  });

  app.get('/verify-email/code', async (request, reply) => {
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.verify_email' }, (f) => verifyCodePage(f, { csrf, email: field(request.query, 'email') }));
  });

  app.post('/verify-email/code', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    try {
      await email.verifyCode(tenantOf(request).id, (field(request.body, 'email') ?? '').slice(0, 254), (field(request.body, 'code') ?? '').slice(0, 20));
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
    return sendPage(reply, 200, { title: 'title.verify_email' }, (f) => verifiedPage(f));
  });

  app.get('/login/forgot', async (request, reply) => {
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.forgot_password' }, (f) => forgotPage(f, { csrf, loginHref: loginHref(request.query) }));
  });

  app.post('/login/forgot', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const address = (field(request.body, 'email') ?? '').slice(0, 254);
    const href = loginHref(request.body);
    if (!/^[^\s@]+@[^\s@]+$/.test(address.trim())) return sendErrorPage(request, reply, errors.invalidRequest('email: must be an email address'));
    const locale = (await pageTranslator(request)).locale;
    try {
      await email.requestReset(tenantOf(request), address, request.ip, locale);
    } catch (err) {
      if (!isAppError(err) || err.status !== 429) throw err;
      for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
      const csrf = csrfFor(request, reply);
      return sendPage(reply, 429, { title: 'title.forgot_password' }, (f) => forgotPage(f, { csrf, loginHref: href, message: f.t('error.rate_limited') }));
    }
    // The same page whether or not the address has an account.
    return sendPage(reply, 200, { title: 'title.forgot_password' }, (f) => forgotSentPage(f, { loginHref: href }));
  });

  app.get('/reset-password', async (request, reply) => {
    const t = token(request.query);
    if (!(await email.linkValid(tenantOf(request).id, t, 'password_reset'))) return sendErrorPage(request, reply, errors.invalidRequest(LINK_INVALID));
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.reset_password' }, (f) => resetPage(f, { csrf, token: t }));
  });

  app.post('/reset-password', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const t = token(request.body);
    const password = field(request.body, 'password') ?? '';
    const again = (message: 'error.passwords_differ' | 'error.password_length') => {
      const csrf = csrfFor(request, reply);
      return sendPage(reply, 400, { title: 'title.reset_password' }, (f) => resetPage(f, { csrf, token: t, message: f.t(message) }));
    };
    if (password !== (field(request.body, 'password_repeat') ?? '')) return again('error.passwords_differ');
    try {
      await email.completeReset(tenantOf(request).id, t, password);
    } catch (err) {
      if (isAppError(err) && err.description === PASSWORD_LENGTH) return again('error.password_length');
      return sendErrorPage(request, reply, err);
    }
    return sendPage(reply, 200, { title: 'title.reset_password' }, (f) => resetDonePage(f));
  });
}
