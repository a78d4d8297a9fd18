/**
 * One access-log line per request, written when the response is done (Fastify's own two
 * request lines are off): request id, tenant, method, path (never the query: it may carry codes
 * or tokens), route, status, duration and, for a refused request, its error code
 * (`oauth_error`). Lines go to the process's asynchronous log destination (kernel/logging.ts).
 *
 * The line is built here from those fields only, none of them a credential, and serialised with
 * JSON.stringify in the shape of every other line (pino's level, time, pid, hostname, msg): no
 * logger and no redaction pass, which cost more than the rest of the line. Every other log line,
 * whatever it carries, still goes through pino and its redaction.
 */
import os from 'node:os';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { errorCodes } from './errors.js';

export function registerAccessLog(app: FastifyInstance, level: string, stream: NodeJS.WritableStream): void {
  // pino's numeric levels; `silent` (and anything unknown) logs nothing.
  const threshold = pino.levels.values[level];
  if (threshold === undefined || threshold > pino.levels.values.info!) return;
  const pid = process.pid;
  const hostname = os.hostname();
  app.addHook('onResponse', (request, reply, done) => {
    const q = request.url.indexOf('?');
    const line = {
      level: 30,
      time: Date.now(),
      pid,
      hostname,
      reqId: request.id,
      tenant: request.tenant?.id ?? null,
      method: request.method,
      url: q < 0 ? request.url : request.url.slice(0, q),
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      oauth_error: errorCodes.get(request) ?? null,
      remoteAddress: request.ip,
      msg: 'request completed',
    };
    stream.write(`${JSON.stringify(line)}\n`);
    done();
  });
}
