import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../kernel/errors.js';
import { normalizeHost, type Tenant, type TenantResolver } from '../kernel/tenancy.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant served on this request's host; null only on tenant-less routes. */
    tenant: Tenant | null;
  }
  interface FastifyContextConfig {
    /** Routes such as /healthz answer on any host. */
    tenantless?: boolean;
  }
}

/**
 * Resolves every request to its tenant from the Host header (X-Forwarded-Host only when the
 * proxy is trusted, which Fastify's `request.host` already honours). Unknown host: 404
 * `unknown_tenant`, never a default tenant.
 */
export function registerTenantResolution(app: FastifyInstance, resolver: TenantResolver): void {
  app.decorateRequest('tenant', null);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.tenantless) return;
    // Only origin-form targets: an absolute-form target names an authority of its own, which
    // must not be served as the Host header's tenant (RFC 9112 §3.2.2).
    if (!request.raw.url?.startsWith('/')) throw errors.invalidRequest('the request target must be a path');
    const host = normalizeHost(request.host);
    if (!host) throw errors.invalidRequest('invalid Host header');
    const tenant = await resolver.resolve(host);
    if (!tenant) throw errors.unknownTenant(host);
    request.tenant = tenant;
  });
}

export function tenantOf(request: FastifyRequest): Tenant {
  if (!request.tenant) throw errors.unknownTenant();
  return request.tenant;
}
