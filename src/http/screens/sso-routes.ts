/**
 * The browser side of enterprise SSO (docs/sso.md): `GET /sso/{connectionId}/start` sends the
 * browser to the organization's IdP; `GET /sso/oidc/{connectionId}/callback` (OIDC) comes back
 * with the IdP's answer, or `POST /sso/saml/{connectionId}/acs` (SAML, HTTP-POST binding) takes
 * it and sends the browser on to `GET /sso/saml/{connectionId}/complete`; then the /authorize
 * flow (or the page) that started it continues.
 * `GET /sso/saml/{connectionId}/metadata` is the SP metadata to give the IdP.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { meta, type SigninEngine } from '../../signin/engine.js';
import { ssoFailure } from '../../signin/messages.js';
import { MAX_SAML_XML_BYTES } from '../../sso/saml.js';
import { type SsoFinish, SsoLoginError, type SsoSigninService } from '../../sso/service.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { seeOther, sendErrorPage, sendSignin } from './outcome.js';
import { flowRefOf } from './routes.js';
import { browserOf } from './session-cookie.js';

export interface SsoRoutesOptions {
  sso: SsoSigninService;
  engine: SigninEngine;
}

/** The ACS body: a form with the base64 SAMLResponse (MAX_SAML_XML_BYTES decoded), with room for URL encoding. */
const ACS_BODY_LIMIT = 2 * MAX_SAML_XML_BYTES;

/** A refused sign-in: logged with the reason and what the IdP or the validation said, and the error page. */
function refused(request: FastifyRequest<{ Params: { connectionId: string } }>, reply: FastifyReply, err: SsoLoginError): Promise<FastifyReply> {
  request.log.info({ connection_id: request.params.connectionId, reason: err.reason, detail: err.detail }, 'sso sign-in refused');
  return sendErrorPage(request, reply, ssoFailure(err.reason));
}

export async function ssoRoutes(app: FastifyInstance, opts: SsoRoutesOptions): Promise<void> {
  const { sso, engine } = opts;

  app.get<{ Params: { connectionId: string } }>('/sso/:connectionId/start', async (request, reply) => {
    const hint = field(request.query, 'login_hint');
    return sendSignin(
      request,
      reply,
      await engine.startUpstream(tenantOf(request), flowRefOf(request.query), request.params.connectionId, hint, browserOf(request)),
    );
  });

  /** The IdP's answer, whatever the protocol: validated by the SSO service, then the engine's next step. */
  async function finish(
    request: FastifyRequest<{ Params: { connectionId: string } }>,
    reply: FastifyReply,
    run: () => Promise<SsoFinish>,
  ): Promise<FastifyReply> {
    let done;
    try {
      done = await run();
    } catch (err) {
      if (err instanceof SsoLoginError) return refused(request, reply, err);
      throw err;
    }
    return sendSignin(request, reply, await engine.upstreamFinished(tenantOf(request), done));
  }

  app.get<{ Params: { connectionId: string } }>('/sso/oidc/:connectionId/callback', async (request, reply) => {
    const tenant = tenantOf(request);
    const browser = browserOf(request);
    const callbackUrl = new URL(request.url, tenant.issuer);
    return finish(request, reply, () =>
      sso.finishOidc(tenant, request.params.connectionId, callbackUrl, browser.ssoBinding, meta(browser), browser.sessionToken),
    );
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
      handle = await sso.acceptSaml(tenant, connectionId, field(request.body, 'SAMLResponse'), meta(browserOf(request)));
    } catch (err) {
      if (err instanceof SsoLoginError) return refused(request, reply, err);
      throw err;
    }
    return seeOther(reply, `/sso/saml/${encodeURIComponent(connectionId)}/complete?handle=${handle}`);
  });

  // Only the browser that sent the AuthnRequest (its binding cookie) opens the session.
  app.get<{ Params: { connectionId: string } }>('/sso/saml/:connectionId/complete', async (request, reply) => {
    const tenant = tenantOf(request);
    const browser = browserOf(request);
    return finish(request, reply, () =>
      sso.completeSaml(tenant, request.params.connectionId, field(request.query, 'handle'), browser.ssoBinding, meta(browser), browser.sessionToken),
    );
  });

  app.get<{ Params: { connectionId: string } }>('/sso/saml/:connectionId/metadata', async (request, reply) => {
    const xml = await sso.samlMetadata(tenantOf(request), request.params.connectionId);
    if (xml === undefined) return sendErrorPage(request, reply, ssoFailure('connection_unknown'));
    return reply.header('content-type', 'application/samlmetadata+xml; charset=utf-8').send(xml);
  });
}
