/**
 * The browser side of enterprise SSO (docs/sso.md): `GET /sso/{connectionId}/start` sends the
 * browser to the organization's IdP; `GET /sso/oidc/{connectionId}/callback` (OIDC) comes back
 * with the IdP's answer, or `POST /sso/saml/{connectionId}/acs` (SAML, HTTP-POST binding) takes
 * it and sends the browser on to `GET /sso/saml/{connectionId}/complete`; then the /authorize
 * flow (or the page) that started it continues.
 * `GET /sso/saml/{connectionId}/metadata` is the SP metadata to give the IdP.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../kernel/errors.js';
import { minimumAcr } from '../../oauth/authorize/acr.js';
import type { LoadedFlow } from '../../oauth/authorize/engine.js';
import type { OAuthServer } from '../../oauth/compose.js';
import { cookieNames, cookieOptions, safeReturnTo } from '../../screens/cookies.js';
import { en } from '../../screens/i18n/index.js';
import type { SigninService } from '../../screens/service.js';
import { MAX_SAML_XML_BYTES } from '../../sso/saml.js';
import { newBrowserBinding, SAML_OUTCOME_TTL_SECONDS, SSO_STATE_TTL_SECONDS, type SsoContinuation, type SsoFailureReason, type SsoFinish, SsoLoginError, type SsoSigninService } from '../../sso/service.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { challengeLocation } from './mfa-routes.js';
import { seeOther, sendErrorPage, sendOutcome } from './outcome.js';
import { sessionToken, setSessionCookie } from './session-cookie.js';

export interface SsoRoutesOptions {
  oauth: Pick<OAuthServer, 'authorize'>;
  signin: SigninService;
  sso: SsoSigninService;
}

/**
 * What the person is told (the catalogue's `sso.<reason>`, in the page's language); the reason
 * code is in the audit event and the page's error code.
 */
const message = (reason: SsoFailureReason) => en[`sso.${reason}`];

/** The ACS body: a form with the base64 SAMLResponse (MAX_SAML_XML_BYTES decoded), with room for URL encoding. */
const ACS_BODY_LIMIT = 2 * MAX_SAML_XML_BYTES;

export const ssoFailure = (reason: SsoFailureReason) => new AppError(reason === 'connection_unknown' ? 404 : 400, reason === 'connection_unknown' ? 'not_found' : 'access_denied', message(reason));

/** Where an SSO sign-in continues, with what the flow asks of it (its organization's MFA policy, its acr). */
export function continuationOf(flow: LoadedFlow | undefined, returnTo: string | undefined): SsoContinuation {
  const page = returnTo ? { returnTo } : {};
  if (!flow) return page;
  const acr = minimumAcr(flow.flow.request.acrValues);
  return { ...page, flow: flow.id, ...(flow.flow.request.organizationId ? { organizationId: flow.flow.request.organizationId } : {}), ...(acr ? { acr } : {}) };
}

const meta = (request: FastifyRequest) => ({ ip: request.ip, userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null });

/**
 * Starts an upstream round trip and answers 303 to the IdP. The browser-binding cookie is kept
 * if the browser has one (parallel tabs), else set; it lives as long as a round trip (and the
 * wait of a SAML outcome for its completion page).
 */
export async function redirectToIdp(
  request: FastifyRequest,
  reply: FastifyReply,
  sso: SsoSigninService,
  connectionId: string,
  continuation: SsoContinuation,
  loginHint?: string,
): Promise<FastifyReply> {
  const tenant = tenantOf(request);
  const name = cookieNames(tenant.issuer).sso;
  let browser = request.cookies[name];
  if (!browser || browser.length !== 43) browser = newBrowserBinding();
  try {
    const location = await sso.start(tenant, connectionId, browser, continuation, loginHint);
    reply.setCookie(name, browser, cookieOptions(tenant.issuer, SSO_STATE_TTL_SECONDS + SAML_OUTCOME_TTL_SECONDS));
    return seeOther(reply, location);
  } catch (err) {
    if (err instanceof SsoLoginError) return sendErrorPage(request, reply, ssoFailure(err.reason));
    throw err;
  }
}

/** A refused sign-in: logged with the reason and what the IdP or the validation said, and the error page. */
function refused(request: FastifyRequest<{ Params: { connectionId: string } }>, reply: FastifyReply, err: SsoLoginError): Promise<FastifyReply> {
  request.log.info({ connection_id: request.params.connectionId, reason: err.reason, detail: err.detail }, 'sso sign-in refused');
  return sendErrorPage(request, reply, ssoFailure(err.reason));
}

export async function ssoRoutes(app: FastifyInstance, opts: SsoRoutesOptions): Promise<void> {
  const { oauth, signin, sso } = opts;

  app.get<{ Params: { connectionId: string } }>('/sso/:connectionId/start', async (request, reply) => {
    const tenant = tenantOf(request);
    const flowParam = field(request.query, 'flow');
    const flow = flowParam === undefined ? undefined : await oauth.authorize.load(flowParam, tenant);
    if (flowParam !== undefined && !flow) return sendErrorPage(request, reply, ssoFailure('state_invalid'));
    const returnTo = safeReturnTo(field(request.query, 'return_to'), tenant.issuer);
    const hint = field(request.query, 'login_hint') ?? flow?.flow.request.loginHint ?? undefined;
    return redirectToIdp(request, reply, sso, request.params.connectionId, continuationOf(flow, returnTo), hint?.slice(0, 254));
  });

  /** The IdP's answer, whatever the protocol: a session, then the flow (or page) that started it. */
  async function finish(request: FastifyRequest<{ Params: { connectionId: string } }>, reply: FastifyReply, run: () => Promise<SsoFinish>): Promise<FastifyReply> {
    const tenant = tenantOf(request);
    let done;
    try {
      done = await run();
    } catch (err) {
      if (err instanceof SsoLoginError) return refused(request, reply, err);
      throw err;
    }
    // An explicit link: the browser's session stays as it is.
    if (done.kind === 'linked') return seeOther(reply, done.continuation.returnTo ?? '/sessions');
    setSessionCookie(request, reply, done.token, signin.settings.sessionMaxSeconds);
    const { flow: flowId, returnTo } = done.continuation;
    // Keyhall's own second factor is still owed: the same challenge as after a password.
    if (done.session.mfaPending) return seeOther(reply, challengeLocation(flowId, returnTo));
    const flow = flowId === undefined ? undefined : await oauth.authorize.load(flowId, tenant);
    if (flowId !== undefined && !flow) return sendErrorPage(request, reply, ssoFailure('state_invalid'));
    if (!flow) return seeOther(reply, returnTo ?? '/sessions');
    return sendOutcome(request, reply, await oauth.authorize.continue(flow, tenant, done.session, { consented: false }));
  }

  app.get<{ Params: { connectionId: string } }>('/sso/oidc/:connectionId/callback', async (request, reply) => {
    const tenant = tenantOf(request);
    const name = cookieNames(tenant.issuer).sso;
    const callbackUrl = new URL(request.url, tenant.issuer);
    return finish(request, reply, () => sso.finishOidc(tenant, request.params.connectionId, callbackUrl, request.cookies[name], meta(request), sessionToken(request)));
  });

  // The IdP's cross-site form post: no CSRF token (the single-use InResponseTo binds it to a
  // request we sent) and no browser-binding cookie (SameSite=Lax cookies are not sent on it). So
  // no session here: the validated outcome waits under a one-time handle, and the browser is sent
  // on, same-site, to the completion page, where its cookie comes along.
  app.post<{ Params: { connectionId: string } }>('/sso/saml/:connectionId/acs', { bodyLimit: ACS_BODY_LIMIT }, async (request, reply) => {
    const tenant = tenantOf(request);
    const { connectionId } = request.params;
    let handle;
    try {
      handle = await sso.acceptSaml(tenant, connectionId, field(request.body, 'SAMLResponse'), meta(request));
    } catch (err) {
      if (err instanceof SsoLoginError) return refused(request, reply, err);
      throw err;
    }
    return seeOther(reply, `/sso/saml/${encodeURIComponent(connectionId)}/complete?handle=${handle}`);
  });

  // Only the browser that sent the AuthnRequest (its binding cookie) opens the session.
  app.get<{ Params: { connectionId: string } }>('/sso/saml/:connectionId/complete', async (request, reply) => {
    const tenant = tenantOf(request);
    const browser = request.cookies[cookieNames(tenant.issuer).sso];
    return finish(request, reply, () => sso.completeSaml(tenant, request.params.connectionId, field(request.query, 'handle'), browser, meta(request), sessionToken(request)));
  });

  app.get<{ Params: { connectionId: string } }>('/sso/saml/:connectionId/metadata', async (request, reply) => {
    const xml = await sso.samlMetadata(tenantOf(request), request.params.connectionId);
    if (xml === undefined) return sendErrorPage(request, reply, ssoFailure('connection_unknown'));
    return reply.header('content-type', 'application/samlmetadata+xml; charset=utf-8').send(xml);
  });
}
