/**
 * Fastify binding of /authorize (RFC 6749 §4.1.1, RFC 9126 §4). The protocol is src/oauth/authorize/;
 * the sign-in it may need is src/signin/ (the engine's `authorize` entry point).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { SigninEngine } from '../../signin/engine.js';
import type { Form } from '../form.js';
import { sendErrorPage, sendSignin } from '../screens/outcome.js';
import { browserOf } from '../screens/session-cookie.js';
import { tenantOf } from '../tenant.js';

export const AUTHORIZE_PATH = '/authorize';

const FORM = 'application/x-www-form-urlencoded';

export async function authorizeRoutes(app: FastifyInstance, opts: { engine: Pick<SigninEngine, 'authorize'> }): Promise<void> {
  const { engine } = opts;

  const authorize = async (request: FastifyRequest, reply: FastifyReply, raw: Form) =>
    sendSignin(request, reply, await engine.authorize(raw, tenantOf(request), browserOf(request)));

  // No automatic HEAD: a request creates a flow, and link checkers should not.
  app.get(AUTHORIZE_PATH, { exposeHeadRoute: false }, (request, reply) => authorize(request, reply, (request.query ?? {}) as Form));
  app.post(AUTHORIZE_PATH, (request, reply) => {
    const type = String(request.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (type !== FORM) return sendErrorPage(request, reply, errors.invalidRequest(`POST /authorize takes an ${FORM} body`));
    return authorize(request, reply, (request.body ?? {}) as Form);
  });
}
