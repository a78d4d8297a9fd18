/**
 * The signed-in user's /account page (docs/account.md): the email address and its change, where
 * the user is signed in (ending a session), linked accounts at social connections (link, unlink)
 * and, as on /sessions, the applications allowed and single sign-on. GET renders and changes
 * nothing; every POST checks CSRF and answers with a 303 (or an error page). Changing how the
 * account signs in (link, unlink, email) needs a login at most 5 minutes old, like /sessions'
 * SSO links.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, isAppError } from '../../kernel/errors.js';
import type { SocialConnectionService } from '../../management/social/service.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { ACCOUNT_NOTICES, type AccountNotice, accountPage, emailChangePage } from '../../screens/account-pages.js';
import { en } from '../../screens/i18n/index.js';
import type { MfaService } from '../../screens/mfa/service.js';
import type { SigninService } from '../../screens/service.js';
import type { EmailService } from '../../email/service.js';
import type { SigninEngine } from '../../signin/engine.js';
import type { SsoLinkService } from '../../sso/link.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { pageTranslator, sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { seeOther, sendErrorPage, sendSignin } from './outcome.js';
import { browserOf, clearSessionCookie, currentSession } from './session-cookie.js';

export interface AccountRoutesOptions {
  signin: SigninService;
  mfa: Pick<MfaService, 'fresh'>;
  engine: Pick<SigninEngine, 'startSocialLink'>;
  links: Pick<SsoLinkService, 'links'>;
  social: Pick<SocialConnectionService, 'list' | 'identities' | 'unlink'>;
  email: Pick<EmailService, 'requestEmailChange' | 'changeTarget' | 'completeEmailChange'>;
}

const SIGN_IN = '/login?return_to=%2Faccount';
const REAUTH = '/login?return_to=%2Faccount&reauth=1';
const CONNECTIONS = 20;

const noticeOf = (query: unknown): AccountNotice | undefined => {
  const done = field(query, 'done');
  return ACCOUNT_NOTICES.find((n) => n === done);
};

export async function accountRoutes(app: FastifyInstance, opts: AccountRoutesOptions): Promise<void> {
  const { signin, mfa, engine, links, social, email } = opts;

  /** The checks of a form: the CSRF token, a usable session (else sign in) and, when `fresh`, a login at most 5 minutes old. */
  const guarded = async (request: FastifyRequest, reply: FastifyReply, fresh: boolean): Promise<SessionRecord | undefined> => {
    if (!csrfOk(request)) {
      await sendErrorPage(request, reply, errors.csrfFailed());
      return undefined;
    }
    const session = await currentSession(signin, request);
    if (session && (!fresh || mfa.fresh(session))) return session;
    seeOther(reply, session ? REAUTH : SIGN_IN);
    return undefined;
  };

  app.get('/account', async (request, reply) => {
    const tenant = tenantOf(request);
    const current = await currentSession(signin, request);
    if (!current) return seeOther(reply, SIGN_IN);
    const user = await signin.user(tenant.id, current.userId);
    if (!user) return seeOther(reply, SIGN_IN);
    const [sessions, consents, sso, identities, connections] = await Promise.all([
      signin.listSessions(tenant.id, user.id),
      signin.listConsents(tenant.id, user.id),
      links.links(tenant.id, user.id, user.email),
      social.identities(tenant.id, user.id),
      social.list(tenant.id),
    ]);
    const names = new Map(connections.slice(0, CONNECTIONS).map((c) => [c.id, c.name]));
    const linked = new Set(identities.map((i) => i.connectionId));
    const notice = noticeOf(request.query);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.account' }, (f) =>
      accountPage(f, {
        csrf,
        email: user.email,
        emailVerified: user.emailVerified,
        currentId: current.id,
        sessions,
        consents,
        sso,
        identities: identities.map((i) => ({ id: i.id, connectionName: names.get(i.connectionId) ?? i.connectionId, email: i.email, linkedAt: i.linkedAt })),
        offered: connections
          .filter((c) => c.signIn && !linked.has(c.id))
          .slice(0, CONNECTIONS)
          .map((c) => ({ id: c.id, name: c.name })),
        connectionNames: names,
        ...(notice ? { notice: { kind: notice, ...(notice === 'email_sent' ? { email: field(request.query, 'to')?.slice(0, 254) } : {}) } } : {}),
      }),
    );
  });

  // Ending a session: back-channel logout to its clients and `session.revoked` reason `user` (SigninService.revokeSessions).
  app.post('/account/sessions/revoke', async (request, reply) => {
    const session = await guarded(request, reply, false);
    if (!session) return reply;
    const revoked = await signin.revokeSessions(tenantOf(request).id, session.userId, field(request.body, 'session_id') ?? '');
    if (revoked.includes(session.id)) {
      clearSessionCookie(request, reply);
      return seeOther(reply, '/login/signed-out');
    }
    return seeOther(reply, '/account?done=session_ended#sessions');
  });

  app.post('/account/identities/link', async (request, reply) => {
    const session = await guarded(request, reply, true);
    if (!session) return reply;
    const tenant = tenantOf(request);
    const id = field(request.body, 'connection_id') ?? '';
    const connection = (await social.list(tenant.id)).find((c) => c.id === id && c.signIn);
    if (!connection) return sendErrorPage(request, reply, errors.notFound(en['social.connection_unknown']));
    return sendSignin(request, reply, await engine.startSocialLink(tenant, connection.id, session.userId, browserOf(request)));
  });

  app.post('/account/identities/unlink', async (request, reply) => {
    const session = await guarded(request, reply, true);
    if (!session) return reply;
    try {
      await social.unlink(tenantOf(request).id, { type: 'user', id: session.userId }, session.userId, field(request.body, 'identity_id') ?? '');
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
    return seeOther(reply, '/account?done=unlinked#identities');
  });

  app.post('/account/email', async (request, reply) => {
    const session = await guarded(request, reply, true);
    if (!session) return reply;
    const address = (field(request.body, 'email') ?? '').trim().slice(0, 300);
    try {
      await email.requestEmailChange(tenantOf(request), session.userId, address, (await pageTranslator(request)).locale);
    } catch (err) {
      if (isAppError(err)) for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
      return sendErrorPage(request, reply, err);
    }
    return seeOther(reply, `/account?done=email_sent&to=${encodeURIComponent(address.toLowerCase())}#email`);
  });

  const tokenOf = (source: unknown) => (field(source, 'token') ?? '').slice(0, 100);

  app.get('/account/email/verify', async (request, reply) => {
    const token = tokenOf(request.query);
    const target = await email.changeTarget(tenantOf(request).id, token);
    if (!target) return sendErrorPage(request, reply, errors.invalidRequest(en['error.email_change_invalid']));
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.account' }, (f) => emailChangePage(f, { csrf, token, email: target }));
  });

  app.post('/account/email/verify', async (request, reply) => {
    if (!csrfOk(request)) return sendErrorPage(request, reply, errors.csrfFailed());
    try {
      await email.completeEmailChange(tenantOf(request), tokenOf(request.body));
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
    return seeOther(reply, '/account?done=email_changed#email');
  });
}
