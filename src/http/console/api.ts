/**
 * The console's JSON API under /console/api (docs/console.md): same origin only, the hosted
 * session cookie, a CSRF header on every mutation, no CORS. Behind it are the very management
 * routes of /v1 (managementRoutes), called as the signed-in administrator.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ConsoleAdmins } from '../../console/service.js';
import type { ManagementServices } from '../../context.js';
import { errors } from '../../kernel/errors.js';
import { PERMISSIONS } from '../../management/permissions.js';
import { managementRoutes } from '../../management/v1.js';
import { checkCsrfToken, cookieNames, crossOrigin } from '../../screens/cookies.js';
import type { SigninService } from '../../screens/service.js';
import { userView } from '../../management/users/service.js';
import { csrfFor } from '../screens/csrf.js';
import { sessionToken } from '../screens/session-cookie.js';
import { tenantOf } from '../tenant.js';
import { validatorCompiler } from '../validation.js';

/** The header a console mutation carries its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const ALL_PERMISSIONS = new Set(PERMISSIONS);

/**
 * A mutation must name this origin in Origin (browsers always send it on fetch POST/PATCH/DELETE;
 * a missing one is refused too), must not be a cross-site fetch, and must carry the token bound
 * to this browser's CSRF cookie in the CSRF header (a header no form and no cross-origin page
 * can set without a CORS preflight, which is never granted here).
 */
function checkMutation(request: FastifyRequest): void {
  const issuer = tenantOf(request).issuer;
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || crossOrigin(origin, issuer)) throw errors.csrfRejected('console requests must come from the console itself (the Origin header is missing or another site)');
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw errors.csrfRejected('console requests must come from the console itself (Sec-Fetch-Site)');
  const token = request.headers[CSRF_HEADER];
  if (!checkCsrfToken(request.cookies[cookieNames(issuer).csrf], typeof token === 'string' ? token : undefined)) {
    throw errors.csrfRejected(`the ${CSRF_HEADER} header is missing or does not match this browser's CSRF cookie; reload the console`);
  }
}

export interface ConsoleApiOptions {
  services: ManagementServices;
  signin: Pick<SigninService, 'current'>;
  admins: ConsoleAdmins;
}

export async function consoleApiRoutes(app: FastifyInstance, opts: ConsoleApiOptions): Promise<void> {
  const { services, signin, admins } = opts;

  app.addHook('onRequest', async (request) => {
    if (!SAFE_METHODS.has(request.method)) checkMutation(request);
  });
  // JSON bodies only, like /v1: anything else is 415 unsupported_media_type.
  app.removeContentTypeParser(['text/plain', 'application/x-www-form-urlencoded']);

  // The setup link: no session yet, only the link's token (and CSRF on the post).
  await app.register(async (setup) => {
    const r = setup.withTypeProvider<ZodTypeProvider>();
    setup.setValidatorCompiler(validatorCompiler);
    r.get('/setup', { schema: { querystring: z.object({ token: z.string().max(100) }) } }, async (request, rep) =>
      rep.send({ open: await admins.setupOpen(tenantOf(request).id, request.query.token), csrf_token: csrfFor(request, rep) }),
    );
    r.post('/setup', { schema: { body: z.strictObject({ token: z.string().max(100), email: z.email().max(254), password: z.string().min(8).max(256) }) } }, async (request, rep) => {
      const user = await admins.completeSetup(tenantOf(request).id, request.body.token, { email: request.body.email, password: request.body.password });
      return rep.code(201).send({ user: userView(user), sign_in: '/login?return_to=%2Fconsole%2F' });
    });
  });

  // Everything else: a signed-in administrator.
  await app.register(async (authed) => {
    authed.decorateRequest('principal', null);
    authed.addHook('onRequest', async (request) => {
      const tenant = tenantOf(request);
      const session = await signin.current(tenant.id, sessionToken(request));
      if (!session) throw errors.loginRequired();
      if (!(await admins.isAdmin(tenant.id, session.userId))) throw errors.forbidden('this account is not an administrator of this tenant');
      request.principal = { actor: { type: 'user', id: session.userId }, keyId: null, tenantId: tenant.id, organizationId: null, scopes: ALL_PERMISSIONS };
    });

    authed.get('/session', async (request, rep) => {
      const tenant = tenantOf(request);
      const user = await services.users.get(tenant.id, request.principal!.actor.id!);
      // The permissions list lets the API-key screen offer every scope without a copy of it.
      return rep.send({ user: { id: user.id, email: user.email }, tenant: { id: tenant.id, issuer: tenant.issuer }, permissions: PERMISSIONS, csrf_token: csrfFor(request, rep) });
    });

    await managementRoutes(authed, services);
  });

  // No CORS: an unknown path (or a preflight) is a plain JSON 404/405 from the app's handlers.
}
