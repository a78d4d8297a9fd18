import type { FastifyInstance } from 'fastify';
import { errors } from '../kernel/errors.js';

export interface HealthOptions {
  ping: () => Promise<void>;
  /** Migrations this build knows that the database lacks. */
  pendingMigrations: () => Promise<string[]>;
  /** True once shutdown began. */
  draining: () => boolean;
}

/**
 * Liveness and readiness: answered on any host, with no tenant. /healthz says the process
 * serves HTTP. /readyz says a load balancer may send it traffic: not while shutting down, not
 * while the database is unreachable, and not while the schema lacks a migration this build
 * needs (another instance is still migrating). The schema check stops once it passed:
 * migrations only ever add.
 */
export async function healthRoutes(app: FastifyInstance, opts: HealthOptions): Promise<void> {
  let schemaCurrent = false;
  app.get('/healthz', { config: { tenantless: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { tenantless: true } }, async () => {
    if (opts.draining()) throw errors.unavailable('shutting down');
    try {
      await opts.ping();
    } catch (err) {
      throw errors.unavailable('database unreachable').because(err);
    }
    if (!schemaCurrent) {
      const pending = await opts.pendingMigrations();
      if (pending.length) throw errors.unavailable(`database migrations pending: ${pending.join(', ')}`);
      schemaCurrent = true;
    }
    return { status: 'ok' };
  });
}
