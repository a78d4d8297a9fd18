/** Fastify bindings of /token, /introspect and /revoke. The protocol lives in src/oauth/. */
import type { FastifyInstance } from 'fastify';
import { errors } from '../kernel/errors.js';
import { handleIntrospection, handleRevocation } from '../oauth/introspection/introspect.js';
import { handleTokenRequest } from '../oauth/token/endpoint.js';
import { tenantOf } from '../http/tenant.js';
import type { OAuthModule } from './module.js';
import { formRequest, noStore } from './request.js';

export const INTROSPECTION_PATH = '/introspect';
export const REVOCATION_PATH = '/revoke';

export async function oauthRoutes(app: FastifyInstance, opts: { oauth: OAuthModule }): Promise<void> {
  const { deps } = opts.oauth;

  app.post('/token', async (request, reply) => {
    const body = await handleTokenRequest(formRequest(request), tenantOf(request), deps);
    return noStore(reply).send(body);
  });

  app.post(INTROSPECTION_PATH, async (request, reply) => {
    const body = await handleIntrospection(formRequest(request), tenantOf(request), deps);
    return noStore(reply).send(body);
  });

  app.post(REVOCATION_PATH, async (request, reply) => {
    await handleRevocation(formRequest(request), tenantOf(request), deps);
    return noStore(reply).code(200).send();
  });

  for (const url of ['/token', INTROSPECTION_PATH, REVOCATION_PATH]) {
    app.route({
      method: ['GET', 'PUT', 'PATCH', 'DELETE'],
      url,
      handler: async () => {
        throw errors.methodNotAllowed('POST');
      },
    });
  }
}
