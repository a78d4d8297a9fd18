/** Fastify binding of /device_authorization (RFC 8628 §3.1). The protocol is src/oauth/device/. */
import type { FastifyInstance } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { OAuthServer } from '../../oauth/compose.js';
import { DEVICE_AUTHORIZATION_PATH } from '../../oauth/device/authorization.js';
import { tenantOf } from '../tenant.js';
import { formBodiesOnly, formRequest, noStore } from './request.js';

export async function deviceAuthorizationRoutes(
  app: FastifyInstance,
  opts: { oauth: Pick<OAuthServer, 'deviceAuthorization'>; bodyLimit?: number },
): Promise<void> {
  await formBodiesOnly(app, opts.bodyLimit);
  app.post(DEVICE_AUTHORIZATION_PATH, async (request, reply) => {
    const body = await opts.oauth.deviceAuthorization(formRequest(request), tenantOf(request));
    return noStore(reply).send(body);
  });
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: DEVICE_AUTHORIZATION_PATH,
    handler: async () => {
      throw errors.methodNotAllowed('POST');
    },
  });
}
