import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Context } from '../context.js';
import { errors } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { loggerOptions } from '../kernel/logging.js';
import { v1Routes } from '../management/v1.js';
import { oauthRoutes } from '../oauth-http/routes.js';
import { scimRoutes } from '../scim/routes.js';
import { drainUnreadBodies } from './body-limit.js';
import { renderError } from './errors.js';
import { rejectUnstorableText } from './input.js';
import { healthRoutes } from './routes/health.js';
import { signinRoutes } from './routes/signin-routes.js';
import { wellKnownRoutes } from './routes/well-known.js';
import { registerTenantResolution } from './tenant.js';

/** KEYHALL_TRUST_PROXY: `true` (any peer) or a comma-separated list of proxy addresses/CIDRs. */
function trustProxySetting(value: string | undefined): boolean | string[] {
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Assembles the HTTP application. The only place (with routes.ts files) that knows Fastify. */
export async function buildApp(ctx: Context): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      ...loggerOptions(ctx.config.logLevel),
      serializers: {
        // Query strings may carry codes or tokens: log the path only.
        req: (req) => ({ method: req.method, url: req.url.split('?')[0], host: req.host, remoteAddress: req.ip }),
      },
    },
    genReqId: () => newId('req'),
    requestIdHeader: false,
    trustProxy: trustProxySetting(ctx.config.trustProxy),
    bodyLimit: ctx.config.bodyLimit,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Malformed request targets (bad percent-encoding…) get our error body too.
    frameworkErrors: (_err, request, reply) => renderError(errors.invalidRequest('malformed request target'), request, reply),
  });

  app.setErrorHandler((err, request, reply) => renderError(err, request, reply));
  app.setNotFoundHandler((request, reply) => renderError(errors.notFound('no such route'), request, reply));
  app.addHook('preValidation', async (request) => rejectUnstorableText(request));
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  drainUnreadBodies(app);

  await app.register(formbody, { bodyLimit: ctx.config.bodyLimit });
  await app.register(healthRoutes, { db: ctx.db });
  registerTenantResolution(app, ctx.repos.tenants, ctx.config.cacheTtlMs);
  await app.register(wellKnownRoutes, { keystore: ctx.keystore });
  await app.register(v1Routes, { prefix: '/v1', ctx });
  await app.register(scimRoutes, { prefix: '/scim/v2', ctx });
  await app.register(oauthRoutes, { oauth: ctx.oauth });
  await app.register(signinRoutes, { ctx });
  return app;
}
