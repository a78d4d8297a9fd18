import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Context } from '../context.js';
import { errors } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { loggerOptions } from '../kernel/logging.js';
import { v1Routes } from '../management/v1.js';
import { isScimTarget } from '../scim/errors.js';
import { renderScimError, scimRoutes } from '../scim/routes.js';
import type { Metrics } from '../metrics/metrics.js';
import { pendingMigrations, ping } from '../storage/db.js';
import { registerAccessLog } from './access-log.js';
import { drainUnreadBodies } from './body-limit.js';
import { clientErrorHandler } from './client-errors.js';
import { credentialRoutes } from './credentials.js';
import { documentRoutes } from './documents.js';
import { renderError } from './errors.js';
import { healthRoutes } from './health.js';
import { homeRoutes } from './home.js';
import { apiReferenceRoutes } from './api-reference.js';
import { metricsRoute, registerRequestMetrics } from './metrics.js';
import { trackRouteMethods } from './methods.js';
import { rejectUnstorableText } from '../kernel/input.js';
import { jsonBodyProblem, readJsonBody } from './json-body.js';
import { mcpRoutes } from './mcp-routes.js';
import { authorizeRoutes } from './oauth/authorize.js';
import { parRoutes } from './oauth/par.js';
import { deviceAuthorizationRoutes } from './oauth/device.js';
import { deviceScreenRoutes } from './screens/device-routes.js';
import { tokenRoutes } from './oauth/token.js';
import { userinfoRoutes } from './oauth/userinfo.js';
import { consoleApiRoutes } from './console/api.js';
import { consoleAssetRoutes } from './console/assets.js';
import { connectScreenRoutes } from './screens/connect-routes.js';
import { mfaRoutes } from './screens/mfa-routes.js';
import { screenRoutes } from './screens/routes.js';
import { accountRoutes } from './screens/account-routes.js';
import { emailScreenRoutes } from './screens/email-routes.js';
import { invitationRoutes } from './screens/invitation-routes.js';
import { signupRoutes } from './screens/signup-routes.js';
import { ssoLinkRoutes } from './screens/sso-link-routes.js';
import { ssoRoutes } from './screens/sso-routes.js';
import { socialRoutes } from './screens/social-routes.js';
import { lazyRequestLogger } from './request-logger.js';
import { registerTenantResolution } from './tenant.js';

/** KEYHALL_TRUST_PROXY: `true` (any peer) or a comma-separated list of proxy addresses/CIDRs. */
function trustProxySetting(value: string | undefined): boolean | string[] {
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Assembles the HTTP application from the composed services; each route plugin gets only the
 * services it uses. The only place (with routes.ts files) that knows Fastify.
 */
export interface AppOptions {
  /** This instance's metrics, when enabled (KEYHALL_METRICS_PORT or KEYHALL_METRICS_TOKEN). */
  metrics?: Metrics;
  /** True once the instance is shutting down: /readyz answers 503 from then on. */
  draining?: () => boolean;
}

export async function buildApp(ctx: Context, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      ...loggerOptions(ctx.config.logLevel),
      stream: ctx.logs.stream,
      serializers: {
        // Query strings may carry codes or tokens: log the path only.
        req: (req) => ({ method: req.method, url: req.url.split('?')[0], host: req.host, remoteAddress: req.ip }),
      },
    },
    // One line per request, written by access-log.ts instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    genReqId: () => newId('req'),
    requestIdHeader: false,
    trustProxy: trustProxySetting(ctx.config.trustProxy),
    bodyLimit: ctx.config.bodyLimit,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Path parameters are ids: a long one must still reach the route, which answers 404.
    routerOptions: { maxParamLength: 2048 },
    // Malformed request targets (bad percent-encoding…) get our error body too; a path
    // parameter longer than any id names nothing.
    // Requests Node's parser refuses (headers or URL over maxHeaderSize…) get our error body too.
    clientErrorHandler,
    // Under /scim/v2 they are SCIM errors, as everything there is.
    frameworkErrors: (err, request, reply) =>
      (isScimTarget(request.url) ? renderScimError : renderError)(
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? errors.notFound('no such resource: an id in the path is too long')
          : errors.invalidRequest('malformed request target'),
        request,
        reply,
      ),
  });

  registerAccessLog(app, ctx.config.logLevel, ctx.logs.stream);
  app.setErrorHandler((err, request, reply) => renderError(err, request, reply));
  // A known path with another method is 405 with Allow on every surface (SCIM renders its own).
  trackRouteMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const allow = app.allowedMethods(request.url.split('?')[0] ?? '/');
    return renderError(allow.length ? errors.methodNotAllowed(allow.join(', '), request.method) : errors.notFound('no such route'), request, reply);
  });
  // Hooks that do not wait on anything take Fastify's callback form: no promise per request.
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      rejectUnstorableText(request);
    } catch (err) {
      return done(err as Error);
    }
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
  drainUnreadBodies(app);
  if (opts.metrics) registerRequestMetrics(app, opts.metrics, new Set(ctx.oauth.grants.keys()));

  // JSON bodies: strict UTF-8, `__proto__` refused by name (json-body.ts).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: ctx.config.bodyLimit }, (_request, body, done) => {
    const result = readJsonBody(body as Buffer);
    if (result.ok) done(null, result.value);
    else done(errors.invalidRequest(jsonBodyProblem(result)), undefined);
  });
  await app.register(formbody, { bodyLimit: ctx.config.bodyLimit });
  // Hosted pages and /authorize read the host-scoped session and CSRF cookies.
  await app.register(cookie);
  await app.register(healthRoutes, { ping: () => ping(ctx.db), pendingMigrations: () => pendingMigrations(ctx.db), draining: opts.draining ?? (() => false) });
  if (opts.metrics && ctx.config.metricsToken) await app.register(metricsRoute, { metrics: opts.metrics, token: ctx.config.metricsToken });
  registerTenantResolution(app, ctx.tenantResolver);
  // The hosted pages' language settings and texts per tenant (src/http/screens/csp.ts).
  app.decorate('pageTexts', ctx.management.branding);
  await app.register(documentRoutes, {
    oauth: ctx.oauth,
    keys: ctx.keystore,
    tenantMetadata: (tenantId, issuer) => ctx.management.mcp.authorizationServerMetadata(tenantId, issuer),
  });
  await app.register(homeRoutes);
  await app.register(v1Routes, { prefix: '/v1', services: ctx.management });
  await app.register(apiReferenceRoutes);
  await app.register(scimRoutes, { prefix: '/scim/v2', scim: ctx.scim, bodyLimit: ctx.config.bodyLimit });
  await app.register(tokenRoutes, { oauth: ctx.oauth, cors: ctx.browserOrigins, bodyLimit: ctx.config.bodyLimit });
  await app.register(parRoutes, { oauth: ctx.oauth, bodyLimit: ctx.config.bodyLimit });
  await app.register(deviceAuthorizationRoutes, { oauth: ctx.oauth, bodyLimit: ctx.config.bodyLimit });
  await app.register(deviceScreenRoutes, { engine: ctx.engine });
  await app.register(authorizeRoutes, { engine: ctx.engine });
  await app.register(userinfoRoutes, {
    oauth: ctx.oauth,
    profiles: ctx.signin,
    cors: ctx.browserOrigins,
    clientClaims: async (tenantId, clientId) => (await ctx.oauth.ports.signin.clientSettings(tenantId, clientId)).claims,
  });
  await app.register(screenRoutes, { oauth: ctx.oauth, signin: ctx.signin, engine: ctx.engine, links: ctx.ssoLinks });
  await app.register(emailScreenRoutes, { email: ctx.email });
  await app.register(invitationRoutes, { invitations: ctx.management.invitations, signin: ctx.signin, engine: ctx.engine });
  await app.register(signupRoutes, { engine: ctx.engine, emailSignin: ctx.emailSignin });
  await app.register(mfaRoutes, { signin: ctx.signin, mfa: ctx.mfa, engine: ctx.engine });
  await app.register(ssoRoutes, { sso: ctx.sso, engine: ctx.engine });
  await app.register(socialRoutes, { social: ctx.social, engine: ctx.engine });
  await app.register(ssoLinkRoutes, { signin: ctx.signin, mfa: ctx.mfa, engine: ctx.engine, links: ctx.ssoLinks });
  await app.register(accountRoutes, {
    signin: ctx.signin,
    mfa: ctx.mfa,
    engine: ctx.engine,
    links: ctx.ssoLinks,
    social: ctx.management.social,
    email: ctx.email,
  });
  await app.register(connectScreenRoutes, { vault: ctx.management.vault, signin: ctx.signin });
  await app.register(mcpRoutes, { oauth: ctx.oauth, registration: ctx.management.mcp, tools: ctx.mcpTools });
  // The administrators' console: its JSON API and its built screens (docs/console.md).
  await app.register(consoleApiRoutes, {
    prefix: '/console/api',
    services: ctx.management,
    signin: ctx.signin,
    admins: ctx.admins,
    overview: ctx.overview,
    mfa: ctx.mfa,
    engine: ctx.engine,
  });
  await app.register(consoleAssetRoutes, { signin: ctx.signin });
  await app.register(credentialRoutes, { oauth: ctx.oauth, credentials: ctx.credentials, statusListTtlSeconds: ctx.credentials.settings.statusListTtlSeconds });
  return app;
}
