/**
 * The console's JSON API under /console/api (docs/console.md): same origin only, the hosted
 * session cookie plus the console's SameSite=Strict cookie bound to it, a CSRF header on every
 * mutation, no CORS. Behind it are the very management routes of /v1 (managementRoutes), called
 * as the signed-in administrator, and the administrator's own second-factor enrolment
 * (enrolment.ts) over the hosted pages' MfaService.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ConsoleOverview } from '../../console/overview.js';
import type { ConsoleAdmins } from '../../console/service.js';
import type { ManagementServices } from '../../context.js';
import { errors } from '../../kernel/errors.js';
import { PERMISSIONS } from '../../management/permissions.js';
import { managementRoutes } from '../../management/v1.js';
import { checkCsrfToken, cookieNames, crossOrigin } from '../../screens/cookies.js';
import type { MfaService } from '../../screens/mfa/service.js';
import type { SigninService } from '../../screens/service.js';
import type { SigninEngine } from '../../signin/engine.js';
import { userView } from '../../management/users/views.js';
import { csrfFor } from '../screens/csrf.js';
import { consoleOwnRoutes } from './own-routes.js';
import { browserOf, sessionToken, setSessionCookie } from '../screens/session-cookie.js';
import { tenantOf } from '../tenant.js';
import { validatorCompiler } from '../validation.js';
import { requireConsoleCookie, setConsoleCookie } from './console-cookie.js';
import { enrolmentRoutes } from './enrolment.js';

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
  if (typeof origin !== 'string' || crossOrigin(origin, issuer))
    throw errors.csrfRejected('console requests must come from the console itself (the Origin header is missing or another site)');
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw errors.csrfRejected('console requests must come from the console itself (Sec-Fetch-Site)');
  const token = request.headers[CSRF_HEADER];
  if (!checkCsrfToken(request.cookies[cookieNames(issuer).csrf], typeof token === 'string' ? token : undefined)) {
    throw errors.csrfRejected(`the ${CSRF_HEADER} header is missing or does not match this browser's CSRF cookie; reload the console`);
  }
}

export interface ConsoleApiOptions {
  services: ManagementServices;
  signin: SigninService;
  admins: ConsoleAdmins;
  overview: ConsoleOverview;
  mfa: MfaService;
  engine: Pick<SigninEngine, 'consoleSetup'>;
}

export async function consoleApiRoutes(app: FastifyInstance, opts: ConsoleApiOptions): Promise<void> {
  const { services, signin, admins, overview, mfa, engine } = opts;

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
    /** Creates the administrator and signs them in: the sign-in engine's console entry (src/signin/engine.ts, consoleSetup). */
    r.post(
      '/setup',
      { schema: { body: z.strictObject({ token: z.string().max(100), email: z.email().max(254), password: z.string().min(8).max(256) }) } },
      async (request, rep) => {
        const done = await engine.consoleSetup(tenantOf(request), request.body, browserOf(request));
        setSessionCookie(request, rep, done.session.token, done.session.maxAgeSeconds);
        setConsoleCookie(request, rep, done.session.token, done.session.maxAgeSeconds);
        return rep.code(201).send({ user: userView(done.user), second_factor_required: done.secondFactorRequired });
      },
    );
  });

  // The administrator's own passkeys and authenticator app (right after setup, or later).
  await app.register(enrolmentRoutes, { prefix: '/mfa', signin, admins, mfa });

  // Everything else: a signed-in administrator.
  await app.register(async (authed) => {
    authed.decorateRequest('principal', null);
    authed.addHook('onRequest', async (request) => {
      const tenant = tenantOf(request);
      const token = sessionToken(request);
      const session = await signin.current(tenant.id, token);
      if (!session) throw errors.loginRequired();
      requireConsoleCookie(request, token);
      if (!(await admins.isAdmin(tenant.id, session.userId))) throw errors.forbidden('this account is not an administrator of this tenant');
      request.principal = { actor: { type: 'user', id: session.userId }, keyId: null, tenantId: tenant.id, organizationId: null, scopes: ALL_PERMISSIONS };
    });

    authed.get('/session', async (request, rep) => {
      const tenant = tenantOf(request);
      const user = await services.users.get(tenant.id, request.principal!.actor.id!);
      // The permissions list lets the API-key screen offer every scope without a copy of it.
      return rep.send({
        user: { id: user.id, email: user.email },
        tenant: { id: tenant.id, issuer: tenant.issuer },
        permissions: PERMISSIONS,
        csrf_token: csrfFor(request, rep),
      });
    });

    await managementRoutes(authed, services);
    // The overview's counts and the administrators: the console's own, not in /v1.
    await authed.register(consoleOwnRoutes, { admins, overview });
  });

  // No CORS: an unknown path (or a preflight) is a plain JSON 404/405 from the app's handlers.
}
