/** Sign-in: the protocol endpoints and the hosted screens, with cookies in their own scope. */
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.js';
import { provideCodeGrantPorts } from '../../oauth/token/grants/authorization-code.js';
import { signinProtocolRoutes } from './signin-protocol.js';
import { signinScreenRoutes } from './signin-screens.js';

export async function signinRoutes(app: FastifyInstance, opts: { ctx: Context }): Promise<void> {
  // The authorization_code grant at /token reads codes from the sign-in store.
  provideCodeGrantPorts(opts.ctx.oauth.deps, { store: opts.ctx.signin.store });
  await app.register(cookie);
  await app.register(signinProtocolRoutes, opts);
  await app.register(signinScreenRoutes, opts);
}
