/**
 * The device grant's hosted pages (RFC 8628 §3.3): /activate (GET shows the form, prefilled from
 * verification_uri_complete; POST checks the user code and starts the sign-in) and
 * /activate/confirm (GET shows the client and scopes; POST approves or denies). Every POST checks
 * CSRF; nothing is decided by a GET. The sign-in engine does the work (src/signin/engine.ts).
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { SigninEngine } from '../../signin/engine.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { csrfOk } from './csrf.js';
import { sendErrorPage, sendSignin } from './outcome.js';
import { flowRefOf } from './routes.js';
import { browserOf } from './session-cookie.js';

export async function deviceScreenRoutes(app: FastifyInstance, opts: { engine: SigninEngine }): Promise<void> {
  const { engine } = opts;

  app.get('/activate', async (request, reply) => sendSignin(request, reply, await engine.showActivate(tenantOf(request), field(request.query, 'user_code'))));

  app.post('/activate', async (request, reply) => {
    if (!csrfOk(request)) return sendErrorPage(request, reply, errors.csrfFailed());
    return sendSignin(request, reply, await engine.activate(tenantOf(request), field(request.body, 'user_code'), browserOf(request)));
  });

  app.get('/activate/confirm', async (request, reply) =>
    sendSignin(request, reply, await engine.showDeviceApproval(tenantOf(request), flowRefOf(request.query), browserOf(request))),
  );

  app.post('/activate/confirm', async (request, reply) => {
    if (!csrfOk(request)) return sendErrorPage(request, reply, errors.csrfFailed());
    const allow = field(request.body, 'decision') === 'allow';
    return sendSignin(request, reply, await engine.deviceDecision(tenantOf(request), flowRefOf(request.body), allow, browserOf(request)));
  });
}
