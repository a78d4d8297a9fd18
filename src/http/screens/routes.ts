/**
 * Hosted screens: /login, /login/consent, /logout (the end_session_endpoint), /sessions.
 * GET renders and changes nothing; every POST checks CSRF and answers with a 303.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../kernel/errors.js';
import { type LoadedFlow, sessionSatisfies } from '../../oauth/authorize/engine.js';
import type { OAuthServer } from '../../oauth/compose.js';
import type { LogoutParams } from '../../oauth/logout/resolve.js';
import { safeReturnTo } from '../../screens/cookies.js';
import { en, type MessageKey } from '../../screens/i18n/index.js';
import { consentPage, loginPage, logoutPage, sessionsPage, signedOutPage } from '../../screens/pages.js';
import type { SigninService } from '../../screens/service.js';
import type { MfaService } from '../../screens/mfa/service.js';
import { minimumAcr } from '../../oauth/authorize/acr.js';
import type { SsoLinkService } from '../../sso/link.js';
import type { SsoSigninService } from '../../sso/service.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { sendPage } from './csp.js';
import { challengeLocation } from './mfa-routes.js';
import { csrfFor, csrfOk } from './csrf.js';
import { seeOther, sendErrorPage, sendOutcome } from './outcome.js';
import { continuationOf, redirectToIdp } from './sso-routes.js';
import { clearSessionCookie, currentSession, sessionToken, setSessionCookie } from './session-cookie.js';

/** The same words for an unknown email and a wrong password (no account enumeration). */
const BAD_CREDENTIALS: MessageKey = 'login.bad_credentials';
const FLOW_GONE = en['error.flow_gone'];

export interface ScreenRoutesOptions {
  oauth: Pick<OAuthServer, 'authorize' | 'logout'>;
  signin: SigninService;
  mfa: Pick<MfaService, 'secondFactorNeeded'>;
  /** Home-realm discovery and the `connection` / `organization` hints (docs/sso.md). */
  sso: SsoSigninService;
  links: Pick<SsoLinkService, 'links'>;
}

const SSO_UNAVAILABLE: MessageKey = 'login.sso_unavailable';

export async function screenRoutes(app: FastifyInstance, opts: ScreenRoutesOptions): Promise<void> {
  const { oauth, signin: service, mfa, sso, links } = opts;
  const flowOf = (request: FastifyRequest, source: unknown) => oauth.authorize.load(field(source, 'flow'), tenantOf(request));
  const session = (request: FastifyRequest) => currentSession(service, request);
  const flowGone = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.pageExpired(FLOW_GONE));
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());

  const renderLogin = async (request: FastifyRequest, reply: FastifyReply, status: number, flow: LoadedFlow | undefined, extra: { email?: string; message?: MessageKey; returnTo?: string }) => {
    const tenant = tenantOf(request);
    const brand = await service.brand(tenant.id, flow?.flow.request.organizationId);
    const csrf = csrfFor(request, reply);
    const ssoOffered = await sso.offered(tenant.id);
    return sendPage(reply, status, { title: 'title.sign_in', uiLocales: flow?.flow.request.uiLocales, brand, formTargets: flow ? [flow.flow.request.redirectUri] : [], script: true }, (f) =>
      loginPage(f, {
        csrf,
        flow: flow?.id,
        returnTo: extra.returnTo,
        email: extra.email ?? flow?.flow.request.loginHint ?? undefined,
        message: extra.message && f.t(extra.message),
        clientName: flow?.client.clientName,
        ssoHint: ssoOffered,
      }),
    );
  };

  app.get('/login', async (request, reply) => {
    const flowParam = field(request.query, 'flow');
    const flow = flowParam === undefined ? undefined : await flowOf(request, request.query);
    if (flowParam !== undefined && !flow) return flowGone(request, reply);
    // An /authorize request that names its connection (or an organization requiring SSO) skips the form.
    const connection = flow ? await sso.forRequest(tenantOf(request).id, flow.flow.request) : undefined;
    if (flow && connection) return redirectToIdp(request, reply, sso, connection, continuationOf(flow, undefined), flow.flow.request.loginHint ?? undefined);
    return renderLogin(request, reply, 200, flow, { returnTo: safeReturnTo(field(request.query, 'return_to'), tenantOf(request).issuer) });
  });

  app.post('/login', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const flowParam = field(request.body, 'flow');
    const flow = flowParam === undefined ? undefined : await flowOf(request, request.body);
    if (flowParam !== undefined && !flow) return flowGone(request, reply);
    const returnTo = safeReturnTo(field(request.body, 'return_to'), tenant.issuer);
    const email = field(request.body, 'email') ?? '';
    const password = field(request.body, 'password') ?? '';
    // Home-realm discovery: a verified SSO domain continues at its IdP when no password was typed,
    // and always when the organization requires SSO (the password is then never checked).
    const realm = await sso.homeRealm(tenant.id, email);
    if (realm.kind === 'sso' && (realm.required || password === '')) {
      return redirectToIdp(request, reply, sso, realm.connectionId, continuationOf(flow, returnTo), email);
    }
    if (realm.kind === 'unavailable') return renderLogin(request, reply, 403, flow, { email, returnTo, message: SSO_UNAVAILABLE });
    const result = await service.login(
      tenant.id,
      email,
      password,
      { ip: request.ip, userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null },
      sessionToken(request),
      (user) => mfa.secondFactorNeeded(tenant.id, user.id, { organizationId: flow?.flow.request.organizationId, acr: minimumAcr(flow?.flow.request.acrValues) }),
    );
    if (result.kind === 'limited') {
      reply.header('retry-after', String(result.retryAfterSeconds));
      return renderLogin(request, reply, 429, flow, { email, returnTo, message: 'login.too_many' });
    }
    if (result.kind === 'invalid') return renderLogin(request, reply, 401, flow, { email, returnTo, message: BAD_CREDENTIALS });
    setSessionCookie(request, reply, result.token, service.settings.sessionMaxSeconds);
    if (result.session.mfaPending) return seeOther(reply, challengeLocation(flow?.id, returnTo));
    if (!flow) return seeOther(reply, returnTo ?? '/sessions');
    return sendOutcome(request, reply, await oauth.authorize.continue(flow, tenant, result.session, { consented: false }));
  });

  app.get('/login/consent', async (request, reply) => {
    const flow = await flowOf(request, request.query);
    if (!flow) return flowGone(request, reply);
    const current = await session(request);
    if (!sessionSatisfies(flow.flow, current)) return seeOther(reply, `/login?flow=${encodeURIComponent(flow.id)}`);
    const brand = await service.brand(tenantOf(request).id, flow.flow.request.organizationId);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.consent', uiLocales: flow.flow.request.uiLocales, brand, formTargets: [flow.flow.request.redirectUri] }, (f) =>
      consentPage(f, { csrf, flow: flow.id, clientName: flow.client.clientName ?? flow.client.id, scopes: flow.flow.request.scopes, resources: flow.flow.request.resources }),
    );
  });

  app.post('/login/consent', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const flow = await flowOf(request, request.body);
    if (!flow) return flowGone(request, reply);
    const current = await session(request);
    if (!sessionSatisfies(flow.flow, current)) return seeOther(reply, `/login?flow=${encodeURIComponent(flow.id)}`);
    if (field(request.body, 'decision') !== 'allow') return sendOutcome(request, reply, await oauth.authorize.deny(flow, tenant));
    await service.grantConsent(tenant.id, current.userId, flow.client.id, flow.flow.request.scopes, flow.flow.request.resources);
    return sendOutcome(request, reply, await oauth.authorize.continue(flow, tenant, current, { consented: true }));
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
    return sendPage(reply, 200, { title: 'title.sessions' }, (f) => sessionsPage(f, { csrf, email: user?.email ?? '', currentId: current.id, sessions, consents, sso: ssoLinks }));
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
