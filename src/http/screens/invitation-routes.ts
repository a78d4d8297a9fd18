/**
 * The hosted page of an invitation link (docs/invitations.md): /invitations/accept?token=… shows,
 * for this browser, what accepting takes: a button (signed in with the invited address), a sign-in
 * that comes back here (an account has the address), a password for the account the invitation
 * creates (none has), or a switch (signed in as another address: sign out, then back here). A GET
 * never uses the invitation; every POST checks CSRF. Tokens travel in the query and in forms,
 * which the access log never writes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_LENGTH } from '../../email/service.js';
import { errors, isAppError } from '../../kernel/errors.js';
import type { InvitationService } from '../../management/invitations/service.js';
import { invitationAcceptPage, invitationCreatePage, invitationDonePage, invitationSignInPage, invitationSwitchPage } from '../../screens/invitation-pages.js';
import type { SigninService } from '../../screens/service.js';
import type { SigninEngine } from '../../signin/engine.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { seeOther, sendErrorPage } from './outcome.js';
import { browserOf, clearSessionCookie, currentSession, setSessionCookie } from './session-cookie.js';

export interface InvitationRoutesOptions {
  invitations: Pick<InvitationService, 'open' | 'accept'>;
  signin: Pick<SigninService, 'current' | 'user' | 'logout'>;
  engine: Pick<SigninEngine, 'invitationSignup'>;
}

const TITLE = { title: 'title.invitation' } as const;
const pageOf = (token: string) => `/invitations/accept?token=${encodeURIComponent(token)}`;

export async function invitationRoutes(app: FastifyInstance, opts: InvitationRoutesOptions): Promise<void> {
  const { invitations, signin, engine } = opts;
  const token = (source: unknown) => (field(source, 'token') ?? '').slice(0, 200);
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());

  app.get('/invitations/accept', async (request, reply) => {
    const tenant = tenantOf(request);
    const t = token(request.query);
    let opened;
    try {
      opened = await invitations.open(tenant.id, t);
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
    const invited = { organization: opened.organizationName, email: opened.invitation.email };
    const session = await currentSession(signin, request);
    const current = session && (await signin.user(tenant.id, session.userId));
    if (current) {
      const csrf = csrfFor(request, reply);
      if (current.email === opened.invitation.email) return sendPage(reply, 200, TITLE, (f) => invitationAcceptPage(f, { ...invited, csrf, token: t }));
      return sendPage(reply, 200, TITLE, (f) => invitationSwitchPage(f, { ...invited, csrf, token: t, current: current.email }));
    }
    if (opened.account) {
      const loginHref = `/login?${new URLSearchParams({ return_to: pageOf(t) }).toString()}`;
      return sendPage(reply, 200, TITLE, (f) => invitationSignInPage(f, { ...invited, loginHref }));
    }
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, TITLE, (f) => invitationCreatePage(f, { ...invited, csrf, token: t }));
  });

  app.post('/invitations/accept', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const t = token(request.body);
    const session = await currentSession(signin, request);
    // Signed out meanwhile: the page again says what to do.
    if (!session) return seeOther(reply, pageOf(t));
    try {
      const done = await invitations.accept(tenant.id, t, session.userId);
      return sendPage(reply, 200, TITLE, (f) => invitationDonePage(f, { organization: done.organizationName }));
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
  });

  app.post('/invitations/accept/new', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const t = token(request.body);
    const password = field(request.body, 'password') ?? '';
    const again = async (message: 'error.passwords_differ' | 'error.password_length') => {
      const opened = await invitations.open(tenant.id, t);
      const csrf = csrfFor(request, reply);
      return sendPage(reply, 400, TITLE, (f) =>
        invitationCreatePage(f, { organization: opened.organizationName, email: opened.invitation.email, csrf, token: t, message: f.t(message) }),
      );
    };
    try {
      if (password !== (field(request.body, 'password_repeat') ?? '')) return await again('error.passwords_differ');
      const done = await engine.invitationSignup(tenant, { token: t, password }, browserOf(request));
      setSessionCookie(request, reply, done.session.token, done.session.maxAgeSeconds);
      return sendPage(reply, 200, TITLE, (f) => invitationDonePage(f, { organization: done.organizationName }));
    } catch (err) {
      if (isAppError(err) && err.description === PASSWORD_LENGTH) return again('error.password_length').catch((e: unknown) => sendErrorPage(request, reply, e));
      return sendErrorPage(request, reply, err);
    }
  });

  app.post('/invitations/accept/switch', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const session = await currentSession(signin, request);
    if (session) await signin.logout(tenant.id, session);
    clearSessionCookie(request, reply);
    return seeOther(reply, pageOf(token(request.body)));
  });
}
