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
  // Callback form: a cached tenant (nearly every request) is set without a promise.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config?.tenantless) return done();
    // Only origin-form targets: an absolute-form target names an authority of its own, which
    // must not be served as the Host header's tenant (RFC 9112 §3.2.2).
    if (!request.raw.url?.startsWith('/')) return done(errors.invalidRequest('the request target must be a path'));
    const host = hostOf(request.host);
    if (!host) return done(errors.invalidRequest('invalid Host header'));
    const cached = resolver.cached(host);
    if (cached) {
      request.tenant = cached;
      return done();
    }
    resolver.resolve(host).then((tenant) => {
      if (!tenant) return done(errors.unknownTenant(host));
      request.tenant = tenant;
      done();
    }, done);
  });
}

/**
 * Normalised hosts by the Host header as sent: a handful of distinct values arrive over and
 * over. Bounded; a flood of distinct hosts only empties it.
 */
const normalised = new Map<string | undefined, string | null>();

function hostOf(raw: string | undefined): string | null {
  let host = normalised.get(raw);
  if (host === undefined) {
    host = normalizeHost(raw);
    if (normalised.size >= 1000) normalised.clear();
    normalised.set(raw, host);
  }
  return host;
}

export function tenantOf(request: FastifyRequest): Tenant {
  if (!request.tenant) throw errors.unknownTenant();
  return request.tenant;
}
