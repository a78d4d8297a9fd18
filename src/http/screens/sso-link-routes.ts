/**
 * Explicit SSO links from /sessions (docs/sso.md, "Linking an account explicitly"):
 * `POST /sso/{connectionId}/link` starts a round trip whose finish links the upstream identity to
 * the signed-in user; `POST /sso/identities/unlink` removes one. Both are form posts with the CSRF
 * token and need a usable session whose login is fresh: never a GET, which another site could
 * make a signed-in victim's browser follow to link the attacker's identity.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { SessionRecord } from '../../oauth/authorize/types.js';
import { en } from '../../screens/i18n/index.js';
import type { MfaService } from '../../screens/mfa/service.js';
import type { SigninService } from '../../screens/service.js';
import type { SigninEngine } from '../../signin/engine.js';
import { ssoFailure } from '../../signin/messages.js';
import type { SsoLinkService } from '../../sso/link.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { csrfOk } from './csrf.js';
import { seeOther, sendErrorPage, sendSignin } from './outcome.js';
import { browserOf, currentSession } from './session-cookie.js';

export interface SsoLinkRoutesOptions {
  signin: SigninService;
  mfa: Pick<MfaService, 'fresh'>;
  engine: Pick<SigninEngine, 'startLink'>;
  links: SsoLinkService;
}

const SIGN_IN = '/login?return_to=%2Fsessions';
const REAUTH = '/login?return_to=%2Fsessions&reauth=1';

export async function ssoLinkRoutes(app: FastifyInstance, opts: SsoLinkRoutesOptions): Promise<void> {
  const { signin, mfa, engine, links } = opts;

  /**
   * The checks of both forms, in order: the CSRF token; a usable session (else sign in); a login
   * at most 5 minutes old (else sign in again). Undefined once it has answered.
   */
  const guarded = async (request: FastifyRequest, reply: FastifyReply): Promise<SessionRecord | undefined> => {
    if (!csrfOk(request)) {
      await sendErrorPage(request, reply, errors.csrfFailed());
      return undefined;
    }
    const session = await currentSession(signin, request);
    if (session && mfa.fresh(session)) return session;
    seeOther(reply, session ? REAUTH : SIGN_IN);
    return undefined;
  };

  app.post<{ Params: { connectionId: string } }>('/sso/:connectionId/link', async (request, reply) => {
    const session = await guarded(request, reply);
    if (!session) return reply;
    const tenant = tenantOf(request);
    const user = await signin.user(tenant.id, session.userId);
    if (!user || !(await links.offers(tenant.id, user.id, user.email, request.params.connectionId))) {
      return sendErrorPage(request, reply, ssoFailure('connection_unknown'));
    }
    return sendSignin(request, reply, await engine.startLink(tenant, request.params.connectionId, user.id, browserOf(request)));
  });

  app.post('/sso/identities/unlink', async (request, reply) => {
    const session = await guarded(request, reply);
    if (!session) return reply;
    const result = await links.unlink(tenantOf(request).id, session.userId, field(request.body, 'connection_id') ?? '');
    if (result === 'not_linked') return sendErrorPage(request, reply, errors.notFound(en['error.sso_not_linked']));
    if (result === 'last_method') {
      return sendErrorPage(request, reply, errors.conflict(en['error.sso_last_method']));
    }
    return seeOther(reply, '/sessions');
  });
}
