/**
 * Who calls the management routes, as every layer of them sees it: the authentication that
 * finds the principal (auth.ts), the services that act for it and the route files that read it
 * from a request (v1.ts decorates each request with it).
 */
import type { Actor } from '../events/catalogue.js';
import { errors } from '../kernel/errors.js';
import type { Permission } from './permissions.js';

/**
 * Who is calling the management routes: an API key over /v1 (bound to one organization or to the
 * platform), or a tenant administrator signed in to the console (/console/api, docs/console.md),
 * who acts like a platform key holding every permission.
 */
export interface Principal {
  /** The actor recorded in audit events: the API key, or the administrator (`user`). */
  actor: Actor;
  /** The calling API key; null for a console administrator. */
  keyId: string | null;
  tenantId: string;
  organizationId: string | null;
  scopes: ReadonlySet<Permission>;
}

/** The authenticated principal of a management request (a Fastify request decorated by v1.ts). */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw errors.invalidToken();
  return request.principal;
}

/** The actor of audit events: the API key over /v1, the administrator in the console. */
export const actorOf = (request: { principal: Principal | null }): Actor => principalOf(request).actor;
