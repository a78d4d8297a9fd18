/** Fastify bindings of /token, /introspect and /revoke. The protocol lives in src/oauth/. */
import type { FastifyInstance } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { OAuthServer } from '../../oauth/compose.js';
import { tenantOf } from '../tenant.js';
import { formBodiesOnly, formRequest, noStore } from './request.js';

export const TOKEN_PATH = '/token';
export const INTROSPECTION_PATH = '/introspect';
export const REVOCATION_PATH = '/revoke';

export async function tokenRoutes(app: FastifyInstance, opts: { oauth: Pick<OAuthServer, 'token' | 'introspect' | 'revoke'>; bodyLimit?: number }): Promise<void> {
  const { oauth } = opts;
  await formBodiesOnly(app, opts.bodyLimit);

  app.post(TOKEN_PATH, async (request, reply) => {
    const body = await oauth.token(formRequest(request), tenantOf(request));
    return noStore(reply).send(body);
  });

  app.post(INTROSPECTION_PATH, async (request, reply) => {
    const body = await oauth.introspect(formRequest(request), tenantOf(request));
    return noStore(reply).send(body);
  });

  app.post(REVOCATION_PATH, async (request, reply) => {
    await oauth.revoke(formRequest(request), tenantOf(request));
    return noStore(reply).code(200).send();
  });

  for (const url of [TOKEN_PATH, INTROSPECTION_PATH, REVOCATION_PATH]) {
    app.route({
      method: ['GET', 'PUT', 'PATCH', 'DELETE'],
      url,
      handler: async () => {
        throw errors.methodNotAllowed('POST');
      },
    });
  }
}
