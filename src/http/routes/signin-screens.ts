/**
 * Hosted screens: /login, /login/consent, /logout (the end_session_endpoint), /sessions.
 * GET renders and changes nothing; every POST checks CSRF and answers with a 303.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.js';
import { continueFlow, denyFlow, type LoadedFlow, loadFlow, sessionSatisfies } from '../../oauth/authorize/engine.js';
import { safeReturnTo } from '../../screens/cookies.js';
import { resolveLogout, type LogoutParams } from '../../screens/logout.js';
import { consentPage, loginPage, logoutPage, sessionsPage, signedOutPage } from '../../screens/pages.js';
import { tenantOf } from '../tenant.js';
import {
  brandFor,
  clearSessionCookie,
  csrfFor,
  csrfOk,
  currentSession,
  field,
  rejectCsrf,
  sendError,
  sendOutcome,
  sendPage,
  sessionToken,
  setSessionCookie,
} from './signin-common.js';

/** The same words for an unknown email and a wrong password (no account enumeration). */
const BAD_CREDENTIALS = 'The email or password is incorrect.';
const FLOW_GONE = 'This sign-in page has expired or was already used. Go back to the application and start again.';

const seeOther = (reply: FastifyReply, location: string) => reply.code(303).header('location', location).send();

export async function signinScreenRoutes(app: FastifyInstance, opts: { ctx: Context }): Promise<void> {
  const { ctx } = opts;
  const service = ctx.signin.service;
  const engineDeps = () => ({ clients: ctx.oauth.deps.clients, store: ctx.signin.store, settings: ctx.signin.authorize, keys: ctx.keystore, now: ctx.clock.now() });
  const flowOf = (request: FastifyRequest, source: unknown) => loadFlow(field(source, 'flow'), tenantOf(request), engineDeps());

  const renderLogin = async (request: FastifyRequest, reply: FastifyReply, status: number, flow: LoadedFlow | undefined, extra: { email?: string; message?: string; returnTo?: string }) => {
    const tenant = tenantOf(request);
    const brand = await brandFor(ctx, tenant.id, flow?.flow.request.organizationId);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, status, { title: 'Sign in', brand, formTargets: flow ? [flow.flow.request.redirectUri] : [] }, (f) =>
      loginPage(f, {
        csrf,
        flow: flow?.id,
        returnTo: extra.returnTo,
        email: extra.email ?? flow?.flow.request.loginHint ?? undefined,
        message: extra.message,
        clientName: flow?.client.clientName,
      }),
    );
  };

  app.get('/login', async (request, reply) => {
    const flowParam = field(request.query, 'flow');
    const flow = flowParam === undefined ? undefined : await flowOf(request, request.query);
    if (flowParam !== undefined && !flow) return sendError(reply, 400, 'invalid_request', FLOW_GONE);
    return renderLogin(request, reply, 200, flow, { returnTo: safeReturnTo(field(request.query, 'return_to'), tenantOf(request).issuer) });
  });

  app.post('/login', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(reply);
    const tenant = tenantOf(request);
    const flowParam = field(request.body, 'flow');
    const flow = flowParam === undefined ? undefined : await flowOf(request, request.body);
    if (flowParam !== undefined && !flow) return sendError(reply, 400, 'invalid_request', FLOW_GONE);
    const returnTo = safeReturnTo(field(request.body, 'return_to'), tenant.issuer);
    const email = field(request.body, 'email') ?? '';
    const result = await service.login(
      tenant.id,
      email,
      field(request.body, 'password') ?? '',
      { ip: request.ip, userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null },
      sessionToken(request),
    );
    if (result.kind === 'limited') {
      reply.header('retry-after', String(result.retryAfterSeconds));
      return renderLogin(request, reply, 429, flow, { email, returnTo, message: 'Too many failed sign-ins. Wait a few minutes and try again.' });
    }
    if (result.kind === 'invalid') return renderLogin(request, reply, 401, flow, { email, returnTo, message: BAD_CREDENTIALS });
    setSessionCookie(request, reply, result.token, service.settings.sessionMaxSeconds);
    if (!flow) return seeOther(reply, returnTo ?? '/sessions');
    return sendOutcome(reply, await continueFlow(flow, tenant, result.session, engineDeps(), { consented: false }));
  });

  app.get('/login/consent', async (request, reply) => {
    const flow = await flowOf(request, request.query);
    if (!flow) return sendError(reply, 400, 'invalid_request', FLOW_GONE);
    const session = await currentSession(ctx, request);
    if (!sessionSatisfies(flow.flow, session)) return seeOther(reply, `/login?flow=${encodeURIComponent(flow.id)}`);
    const brand = await brandFor(ctx, tenantOf(request).id, flow.flow.request.organizationId);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'Allow access', brand, formTargets: [flow.flow.request.redirectUri] }, (f) =>
      consentPage(f, { csrf, flow: flow.id, clientName: flow.client.clientName ?? flow.client.id, scopes: flow.flow.request.scopes, resources: flow.flow.request.resources }),
    );
  });

  app.post('/login/consent', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(reply);
    const tenant = tenantOf(request);
    const flow = await flowOf(request, request.body);
    if (!flow) return sendError(reply, 400, 'invalid_request', FLOW_GONE);
    const session = await currentSession(ctx, request);
    if (!sessionSatisfies(flow.flow, session)) return seeOther(reply, `/login?flow=${encodeURIComponent(flow.id)}`);
    if (field(request.body, 'decision') !== 'allow') return sendOutcome(reply, await denyFlow(flow, tenant));
    await service.grantConsent(tenant.id, session.userId, flow.client.id, flow.flow.request.scopes, flow.flow.request.resources);
    return sendOutcome(reply, await continueFlow(flow, tenant, session, engineDeps(), { consented: true }));
  });

  const logoutParams = (source: unknown): LogoutParams => ({
    idTokenHint: field(source, 'id_token_hint'),
    clientId: field(source, 'client_id'),
    postLogoutRedirectUri: field(source, 'post_logout_redirect_uri'),
    state: field(source, 'state'),
  });
  const logoutDeps = () => ({ keys: ctx.keystore, clients: ctx.oauth.deps.clients, store: ctx.signin.store });

  app.get('/logout', async (request, reply) => {
    const params = logoutParams(request.query);
    const target = await resolveLogout(params, tenantOf(request), logoutDeps());
    if (!target.ok) return sendError(reply, 400, 'invalid_request', target.description);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'Sign out', formTargets: target.redirect ? [target.redirect] : [] }, (f) =>
      logoutPage(f, { csrf, clientName: target.clientName, ...params }),
    );
  });

  app.post('/logout', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(reply);
    const tenant = tenantOf(request);
    const target = await resolveLogout(logoutParams(request.body), tenant, logoutDeps());
    if (!target.ok) return sendError(reply, 400, 'invalid_request', target.description);
    const session = await currentSession(ctx, request);
    if (session) await service.logout(tenant.id, session);
    clearSessionCookie(request, reply);
    return seeOther(reply, target.redirect ?? '/login/signed-out');
  });

  app.get('/login/signed-out', async (_request, reply) => sendPage(reply, 200, { title: 'Signed out' }, (f) => signedOutPage(f)));

  app.get('/sessions', async (request, reply) => {
    const tenant = tenantOf(request);
    const session = await currentSession(ctx, request);
    if (!session) return seeOther(reply, '/login?return_to=%2Fsessions');
    const user = await service.user(tenant.id, session.userId);
    const [sessions, consents] = await Promise.all([service.listSessions(tenant.id, session.userId), service.listConsents(tenant.id, session.userId)]);
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'Sessions' }, (f) => sessionsPage(f, { csrf, email: user?.email ?? '', currentId: session.id, sessions, consents }));
  });

  app.post('/sessions/revoke', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(reply);
    const tenant = tenantOf(request);
    const session = await currentSession(ctx, request);
    if (!session) return seeOther(reply, '/login?return_to=%2Fsessions');
    const which = field(request.body, 'session_id') ?? '';
    const revoked = await service.revokeSessions(tenant.id, session.userId, which);
    if (revoked.includes(session.id)) {
      clearSessionCookie(request, reply);
      return seeOther(reply, '/login/signed-out');
    }
    return seeOther(reply, '/sessions');
  });

  app.post('/sessions/consents/revoke', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(reply);
    const tenant = tenantOf(request);
    const session = await currentSession(ctx, request);
    if (!session) return seeOther(reply, '/login?return_to=%2Fsessions');
    await service.revokeConsent(tenant.id, session.userId, field(request.body, 'client_id') ?? '');
    return seeOther(reply, '/sessions');
  });
}
