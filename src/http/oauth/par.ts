/** Fastify binding of /par (RFC 9126). The protocol is src/oauth/par/push.ts. */
import type { FastifyInstance } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { OAuthServer } from '../../oauth/compose.js';
import { PAR_PATH } from '../../oauth/par/push.js';
import { tenantOf } from '../tenant.js';
import { formBodiesOnly, formRequest, noStore } from './request.js';

export async function parRoutes(app: FastifyInstance, opts: { oauth: Pick<OAuthServer, 'pushAuthorizationRequest'>; bodyLimit?: number }): Promise<void> {
  await formBodiesOnly(app, opts.bodyLimit);
  app.post(PAR_PATH, async (request, reply) => {
    const body = await opts.oauth.pushAuthorizationRequest(formRequest(request), tenantOf(request));
    return noStore(reply).code(201).send(body);
  });
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: PAR_PATH,
    handler: async () => {
      throw errors.methodNotAllowed('POST');
    },
  });
}
