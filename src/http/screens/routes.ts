/**
 * Hosted screens: /login, /login/consent, /logout (the end_session_endpoint), /sessions.
 * GET renders and changes nothing; every POST checks CSRF and answers with a 303.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { OAuthServer } from '../../oauth/compose.js';
import type { LogoutParams } from '../../oauth/logout/resolve.js';
import { logoutPage, sessionsPage, signedOutPage } from '../../screens/pages.js';
import type { SigninService } from '../../screens/service.js';
import type { SigninEngine } from '../../signin/engine.js';
import type { SsoLinkService } from '../../sso/link.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { seeOther, sendErrorPage, sendSignin } from './outcome.js';
import { browserOf, clearSessionCookie, currentSession } from './session-cookie.js';

export interface ScreenRoutesOptions {
  oauth: Pick<OAuthServer, 'logout'>;
  signin: SigninService;
  engine: SigninEngine;
  links: Pick<SsoLinkService, 'links'>;
}

/** The sign-in context a page submits (in its query or its form): the flow handle and the return_to. */
export const flowRefOf = (source: unknown) => ({ flow: field(source, 'flow'), returnTo: field(source, 'return_to') });

export async function screenRoutes(app: FastifyInstance, opts: ScreenRoutesOptions): Promise<void> {
  const { oauth, signin: service, engine, links } = opts;
  const session = (request: FastifyRequest) => currentSession(service, request);
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());

  app.get('/login', async (request, reply) =>
    sendSignin(request, reply, await engine.showLogin(tenantOf(request), flowRefOf(request.query), browserOf(request))),
  );

  app.post('/login', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const credentials = { email: field(request.body, 'email') ?? '', password: field(request.body, 'password') ?? '' };
    return sendSignin(request, reply, await engine.password(tenantOf(request), flowRefOf(request.body), credentials, browserOf(request)));
  });

  app.get('/login/consent', async (request, reply) =>
    sendSignin(request, reply, await engine.showConsent(tenantOf(request), flowRefOf(request.query), browserOf(request))),
  );

  app.post('/login/consent', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const allow = field(request.body, 'decision') === 'allow';
    return sendSignin(request, reply, await engine.consent(tenantOf(request), flowRefOf(request.body), allow, browserOf(request)));
  });

  const logoutParams = (source: unknown): LogoutParams => ({
    idTokenHint: field(source, 'id_token_hint'),
    clientId: field(source, 'client_id'),
    postLogoutRedirectUri: field(source, 'post_logout_redirect_uri'),
    state: field(source, 'state'),
  });

  app.get('/logout', async (request, reply) => {
    const params = logoutParams(request.query);
    const target = await oauth.logout(params, tenantOf(request));
    if (!target.ok) return sendErrorPage(request, reply, errors.invalidRequest(target.description));
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.sign_out', formTargets: target.redirect ? [target.redirect] : [] }, (f) =>
      logoutPage(f, { csrf, clientName: target.clientName, ...params }),
    );
  });

  app.post('/logout', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const target = await oauth.logout(logoutParams(request.body), tenant);
    if (!target.ok) return sendErrorPage(request, reply, errors.invalidRequest(target.description));
    const current = await session(request);
    if (current) await service.logout(tenant.id, current);
    clearSessionCookie(request, reply);
    return seeOther(reply, target.redirect ?? '/login/signed-out');
  });

  app.get('/login/signed-out', async (_request, reply) => sendPage(reply, 200, { title: 'title.signed_out' }, (f) => signedOutPage(f)));

  app.get('/sessions', async (request, reply) => {
    const tenant = tenantOf(request);
    const current = await session(request);
    if (!current) return seeOther(reply, '/login?return_to=%2Fsessions');
    const user = await service.user(tenant.id, current.userId);
    const [sessions, consents, ssoLinks] = await Promise.all([
      service.listSessions(tenant.id, current.userId),
      service.listConsents(tenant.id, current.userId),
      links.links(tenant.id, current.userId, user?.email ?? ''),
    ]);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.sessions' }, (f) =>
      sessionsPage(f, { csrf, email: user?.email ?? '', currentId: current.id, sessions, consents, sso: ssoLinks }),
    );
  });

  app.post('/sessions/revoke', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const current = await session(request);
    if (!current) return seeOther(reply, '/login?return_to=%2Fsessions');
    const which = field(request.body, 'session_id') ?? '';
    const revoked = await service.revokeSessions(tenant.id, current.userId, which);
    if (revoked.includes(current.id)) {
      clearSessionCookie(request, reply);
      return seeOther(reply, '/login/signed-out');
    }
    return seeOther(reply, '/sessions');
  });

  app.post('/sessions/consents/revoke', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const current = await session(request);
    if (!current) return seeOther(reply, '/login?return_to=%2Fsessions');
    await service.revokeConsent(tenant.id, current.userId, field(request.body, 'client_id') ?? '');
    return seeOther(reply, '/sessions');
  });
}
