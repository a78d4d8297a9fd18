import type { FastifyInstance } from 'fastify';
import { errors } from '../kernel/errors.js';

/** Liveness and readiness: answered on any host, with no tenant. */
export async function healthRoutes(app: FastifyInstance, opts: { ping: () => Promise<void> }): Promise<void> {
  app.get('/healthz', { config: { tenantless: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { tenantless: true } }, async () => {
    try {
      await opts.ping();
    } catch (err) {
      throw errors.unavailable('database unreachable').because(err);
    }
    return { status: 'ok' };
  });
}
