import type { FastifyInstance } from 'fastify';
import { errors } from '../../kernel/errors.js';
import { type Db, ping } from '../../storage/db.js';

/** Liveness and readiness: answered on any host, with no tenant. */
export async function healthRoutes(app: FastifyInstance, opts: { db: Db }): Promise<void> {
  app.get('/healthz', { config: { tenantless: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: { tenantless: true } }, async () => {
    try {
      await ping(opts.db);
    } catch {
      throw errors.unavailable('database unreachable');
    }
    return { status: 'ok' };
  });
}
