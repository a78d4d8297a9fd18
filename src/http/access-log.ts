/**
 * One access-log line per request, written when the response is done (Fastify's own two
 * request lines are off): request id, tenant, method, path (never the query: it may carry codes
 * or tokens), route, status, duration and, for a refused request, its error code
 * (`oauth_error`). Lines go to the process's asynchronous log destination (kernel/logging.ts).
 *
 * The line is built here from those fields only, none of them a credential, so it goes through
 * a logger without the redaction pass (which costs more than the rest of the line): every other
 * log line, whatever it carries, is still redacted.
 */
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { errorCodes } from './errors.js';

export function registerAccessLog(app: FastifyInstance, level: string, stream: NodeJS.WritableStream): void {
  const access = pino({ level }, stream);
  if (!access.isLevelEnabled('info')) return;
  app.addHook('onResponse', (request, reply, done) => {
    const q = request.url.indexOf('?');
    access.info(
      {
        reqId: request.id,
        tenant: request.tenant?.id ?? null,
        method: request.method,
        url: q < 0 ? request.url : request.url.slice(0, q),
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        oauth_error: errorCodes.get(request) ?? null,
        remoteAddress: request.ip,
      },
      'request completed',
    );
    done();
  });
}
