import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods some route answers for this path (empty: no route has the path at all). */
    allowedMethods(path: string): string[];
  }
}

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A Fastify route pattern (`/v1/organizations/:orgId`, `/x/*`) as a regular expression. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+(?:\([^)]*\))?|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/**
 * Records every route as it is registered, so a 404 can tell "no such path" from "no such
 * method on this path" (405 with `Allow`) for every surface at once, without a route per path.
 * Call before any route is registered: the `onRoute` hook sees only later routes.
 */
export function trackRouteMethods(app: FastifyInstance): void {
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
    routes.push({ pattern: patternOf(route.url), methods });
  });
  app.decorate('allowedMethods', (path: string) => {
    const found = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) found.add(m);
    return [...found].sort((a, b) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b));
  });
}
