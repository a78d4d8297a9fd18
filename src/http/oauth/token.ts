/** Fastify bindings of /token, /introspect and /revoke. The protocol lives in src/oauth/. */
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { errors } from '../../kernel/errors.js';
import { parseBasic } from '../../oauth/client-auth/presented.js';
import type { OAuthServer } from '../../oauth/compose.js';
import { oauthErrors } from '../../oauth/errors.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { browserCors, clientOriginAllowed, type CorsPolicy } from './cors.js';
import { formBodiesOnly, formRequest, noStore } from './request.js';

export const TOKEN_PATH = '/token';
export const INTROSPECTION_PATH = '/introspect';
export const REVOCATION_PATH = '/revoke';

/** The client a /token or /revoke request names (not yet authenticated): `client_id` or the Basic user. */
function namedClient(body: unknown, authorization: string | undefined): string | undefined {
  const id = field(body, 'client_id');
  if (id !== undefined || !authorization || !/^basic /i.test(authorization)) return id;
  try {
    return parseBasic(authorization).clientId;
  } catch {
    return undefined; // client authentication answers it
  }
}

export async function tokenRoutes(
  app: FastifyInstance,
  opts: { oauth: Pick<OAuthServer, 'token' | 'introspect' | 'revoke'>; cors: CorsPolicy; bodyLimit?: number },
): Promise<void> {
  const { oauth } = opts;
  await formBodiesOnly(app, opts.bodyLimit);
  // Browser apps call /token and /revoke (not /introspect: resource servers are not browsers).
  browserCors(app, opts.cors, { [TOKEN_PATH]: ['POST'], [REVOCATION_PATH]: ['POST'] });
  // A cross-origin request must come from an origin its client lists; otherwise it is refused
  // before it has any effect (a form POST needs no preflight, so CORS alone would not stop it).
  const originCheck: preHandlerAsyncHookHandler = async (request, reply) => {
    // No Origin: not a browser's request, nothing to check (clientOriginAllowed would allow it).
    if (!request.headers.origin) return;
    const clientId = namedClient(request.body, request.headers.authorization);
    if (!(await clientOriginAllowed(request, reply, opts.cors, clientId))) {
      throw oauthErrors.invalidRequest(`origin ${request.headers.origin} is not in the allowed_origins of client ${clientId}`);
    }
  };

  app.post(TOKEN_PATH, { preHandler: originCheck }, async (request, reply) => {
    const body = await oauth.token(formRequest(request), tenantOf(request));
    return noStore(reply).send(body);
  });

  app.post(INTROSPECTION_PATH, async (request, reply) => {
    const body = await oauth.introspect(formRequest(request), tenantOf(request));
    return noStore(reply).send(body);
  });

  app.post(REVOCATION_PATH, { preHandler: originCheck }, async (request, reply) => {
    await oauth.revoke(formRequest(request), tenantOf(request));
    return noStore(reply).code(200).send();
  });

  for (const url of [TOKEN_PATH, INTROSPECTION_PATH, REVOCATION_PATH]) {
    const allow = url === INTROSPECTION_PATH ? 'POST' : 'POST, OPTIONS';
    app.route({
      method: ['GET', 'PUT', 'PATCH', 'DELETE'],
      url,
      handler: async () => {
        throw errors.methodNotAllowed(allow);
      },
    });
  }
}
