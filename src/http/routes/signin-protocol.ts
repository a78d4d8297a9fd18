/** Fastify bindings of /authorize, /par and /userinfo. The protocol lives in src/oauth/{authorize,par,userinfo}. */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Context } from '../../context.js';
import { errors } from '../../kernel/errors.js';
import { requireAccessToken } from '../../oauth-http/guard.js';
import { formRequest, noStore } from '../../oauth-http/request.js';
import { startAuthorization } from '../../oauth/authorize/engine.js';
import { PAR_PATH, handlePushedAuthorizationRequest } from '../../oauth/par/push.js';
import { resourceErrors } from '../../oauth/errors.js';
import { authorizeResourceRequest, PROTECTED_RESOURCE_METADATA_PATH } from '../../oauth/resource-server/guard.js';
import { userInfoClaims } from '../../oauth/userinfo/claims.js';
import { MemberRepo } from '../../storage/repos/members.js';
import { UserRepo } from '../../storage/repos/users.js';
import { tenantOf } from '../tenant.js';
import { currentSession, field, type Form, sendError, sendOutcome } from './signin-common.js';

export const AUTHORIZE_PATH = '/authorize';
export const USERINFO_PATH = '/userinfo';

const FORM = 'application/x-www-form-urlencoded';

export async function signinProtocolRoutes(app: FastifyInstance, opts: { ctx: Context }): Promise<void> {
  const { ctx } = opts;

  const authorize = async (request: FastifyRequest, reply: FastifyReply, raw: Form) => {
    const tenant = tenantOf(request);
    const session = await currentSession(ctx, request);
    const outcome = await startAuthorization(raw, tenant, session, {
      clients: ctx.oauth.deps.clients,
      store: ctx.signin.store,
      settings: ctx.signin.authorize,
      keys: ctx.keystore,
      now: ctx.clock.now(),
    });
    return sendOutcome(reply, outcome);
  };

  // No automatic HEAD: a request creates a flow, and link checkers should not.
  app.get(AUTHORIZE_PATH, { exposeHeadRoute: false }, (request, reply) => authorize(request, reply, (request.query ?? {}) as Form));
  app.post(AUTHORIZE_PATH, (request, reply) => {
    const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== FORM) return sendError(reply, 400, 'invalid_request', `POST /authorize takes an ${FORM} body`);
    return authorize(request, reply, (request.body ?? {}) as Form);
  });

  app.post(PAR_PATH, async (request, reply) => {
    const body = await handlePushedAuthorizationRequest(formRequest(request), tenantOf(request), ctx.oauth.deps, {
      store: ctx.signin.store,
      parTtlSeconds: ctx.signin.parTtlSeconds,
    });
    return noStore(reply).code(201).send(body);
  });
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: PAR_PATH,
    handler: async () => {
      throw errors.methodNotAllowed('POST');
    },
  });

  // OIDC Core §5.3: claims of the token's user, by the token's scopes; needs `openid`.
  const headerGuard = requireAccessToken(ctx.oauth.deps, { scope: 'openid' });
  // RFC 6750 §2.2: a POST may carry the token as the form parameter `access_token` instead
  // (never both; never the query string). It goes through the same guard as a Bearer token.
  const guard: preHandlerAsyncHookHandler = async function (request, reply) {
    const bodyToken = request.method === 'POST' ? field(request.body, 'access_token') : undefined;
    if (bodyToken === undefined) return headerGuard.call(this, request, reply);
    if (request.headers.authorization !== undefined) throw errors.invalidRequest('send the access token in one way only');
    const tenant = tenantOf(request);
    request.accessToken = await authorizeResourceRequest(
      { method: 'POST', url: `${tenant.issuer}${USERINFO_PATH}`, headers: { ...request.raw.headersDistinct, authorization: [`Bearer ${bodyToken}`] } },
      tenant,
      { resource: tenant.issuer, scope: 'openid' },
      ctx.oauth.deps,
    );
  };
  const userinfo = async (request: FastifyRequest, reply: FastifyReply) => {
    const tenant = tenantOf(request);
    const token = request.accessToken!;
    const user = await new UserRepo(ctx.db.kysely).find(tenant.id, token.sub);
    if (!user) {
      throw resourceErrors.invalidToken({ scheme: token.cnf?.jkt ? 'DPoP' : 'Bearer', resourceMetadata: `${tenant.issuer}${PROTECTED_RESOURCE_METADATA_PATH}` }, 'the token does not name a user');
    }
    const memberships = await new MemberRepo(ctx.db.kysely).listByUser(tenant.id, user.id);
    const claims = userInfoClaims(
      { id: user.id, email: user.email, emailVerified: user.emailVerified, name: user.name, organizations: memberships.map((m) => ({ id: m.organizationId, role: m.role })) },
      (token.scope ?? '').split(' '),
    );
    return noStore(reply).send(claims);
  };
  app.get(USERINFO_PATH, { preHandler: guard }, userinfo);
  app.post(USERINFO_PATH, { preHandler: guard }, userinfo);
}
