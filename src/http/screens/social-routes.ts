/**
 * The browser side of social sign-in (docs/social.md): `GET /social/{connectionId}/start` (the
 * login page's button, a plain link) sends the browser to the provider; `GET
 * /social/{connectionId}/callback` comes back with its answer (or `POST` there, a provider's
 * form_post, which is sent on to the GET); then the /authorize flow (or the page) that started it
 * continues.
 */
import type { FastifyInstance } from 'fastify';
import { meta, type SigninEngine } from '../../signin/engine.js';
import { socialFailure } from '../../signin/messages.js';
import { SocialLoginError, type SocialSigninService } from '../../social/service.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { seeOther, sendErrorPage, sendSignin } from './outcome.js';
import { flowRefOf } from './routes.js';
import { browserOf } from './session-cookie.js';

/** A form_post answer is a code, a state and Apple's small `user` document. */
const FORM_POST_BODY_LIMIT = 16 * 1024;

export interface SocialRoutesOptions {
  social: SocialSigninService;
  engine: SigninEngine;
}

export async function socialRoutes(app: FastifyInstance, opts: SocialRoutesOptions): Promise<void> {
  const { social, engine } = opts;

  app.get<{ Params: { connectionId: string } }>('/social/:connectionId/start', async (request, reply) =>
    sendSignin(request, reply, await engine.startSocial(tenantOf(request), flowRefOf(request.query), request.params.connectionId, browserOf(request))),
  );

  app.get<{ Params: { connectionId: string } }>('/social/:connectionId/callback', async (request, reply) => {
    const tenant = tenantOf(request);
    const browser = browserOf(request);
    let done;
    try {
      done = await social.finish(
        tenant,
        request.params.connectionId,
        new URL(request.url, tenant.issuer),
        browser.ssoBinding,
        meta(browser),
        browser.sessionToken,
      );
    } catch (err) {
      if (!(err instanceof SocialLoginError)) throw err;
      request.log.info({ connection_id: request.params.connectionId, reason: err.reason, detail: err.detail }, 'social sign-in refused');
      return sendErrorPage(request, reply, socialFailure(err.reason));
    }
    return sendSignin(request, reply, await engine.upstreamFinished(tenant, done));
  });

  // A provider's form_post (Apple): cross-site, so no CSRF token and no SameSite=Lax binding
  // cookie. The only route exempt from the CSRF check, and it decides nothing: for a connection
  // that asked for form_post, the answer goes on, same-site, to the GET callback, where the
  // browser's cookie comes along and the state is checked and consumed.
  app.post<{ Params: { connectionId: string } }>('/social/:connectionId/callback', { bodyLimit: FORM_POST_BODY_LIMIT }, async (request, reply) => {
    const answer = (name: string) => field(request.body, name);
    try {
      return seeOther(reply, await social.formPostCallback(tenantOf(request).id, request.params.connectionId, answer, meta(browserOf(request))));
    } catch (err) {
      if (!(err instanceof SocialLoginError)) throw err;
      request.log.info({ connection_id: request.params.connectionId, reason: err.reason, detail: err.detail }, 'social sign-in refused');
      return sendErrorPage(request, reply, socialFailure(err.reason));
    }
  });
}
