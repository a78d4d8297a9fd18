import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../kernel/crypto/hash.js';
import { errors } from '../kernel/errors.js';
import type { LoginOutcome, Metrics, RequestRecorder } from '../metrics/metrics.js';

/**
 * The route family of a registered route pattern: a small fixed vocabulary, so the request
 * metrics have a bounded number of series whatever paths are requested.
 */
export function routeFamily(url: string | undefined): string {
  if (url === undefined) return 'unmatched';
  const exact: Record<string, string> = {
    '/token': 'token',
    '/introspect': 'introspect',
    '/revoke': 'revoke',
    '/par': 'par',
    '/authorize': 'authorize',
    '/userinfo': 'userinfo',
    '/healthz': 'health',
    '/readyz': 'health',
    '/metrics': 'metrics',
  };
  if (exact[url]) return exact[url];
  if (url.startsWith('/.well-known/') || url.includes('jwks')) return 'discovery';
  if (url.startsWith('/v1/') || url === '/v1') return 'management';
  if (url.startsWith('/scim/')) return 'scim';
  if (url.startsWith('/login') || url.startsWith('/logout') || url.startsWith('/sessions')) return 'screens';
  return 'other';
}

function loginOutcome(status: number): LoginOutcome {
  if (status === 401) return 'invalid';
  if (status === 429) return 'limited';
  return status < 400 ? 'succeeded' : 'rejected';
}

/**
 * Feeds every answered request into the metrics from one onResponse hook. The recorder of a
 * route pattern is resolved once and cached (a bounded map: one entry per registered route), so
 * the hot path (/token) adds a map lookup and two increments. Successful /token answers count
 * per grant type (only grant types the server has: a caller's string never becomes a label);
 * POST /login answers count per outcome.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics, grantTypes: ReadonlySet<string>): void {
  const recorders = new Map<string | undefined, RequestRecorder>();
  const recorderOf = (url: string | undefined): RequestRecorder => {
    let recorder = recorders.get(url);
    if (!recorder) {
      recorder = metrics.requestRecorder(routeFamily(url));
      recorders.set(url, recorder);
    }
    return recorder;
  };
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const url = request.routeOptions.url;
    const status = reply.statusCode;
    const tenantId = request.tenant?.id ?? null;
    recorderOf(url)(status, reply.elapsedTime / 1000, tenantId);
    if (url === '/token' && status === 200) {
      const grant = (request.body as { grant_type?: unknown } | undefined)?.grant_type;
      if (typeof grant === 'string' && grantTypes.has(grant)) metrics.tokenIssued(grant, tenantId);
    } else if (url === '/login' && request.method === 'POST') {
      metrics.login(loginOutcome(status), tenantId);
    }
    done();
  });
}

/**
 * `/metrics` on the main listener, for deployments that cannot open a second port: answered on
 * any host, only to `Authorization: Bearer <KEYHALL_METRICS_TOKEN>` (compared in constant time).
 * Registered only when that token is configured.
 */
export async function metricsRoute(app: FastifyInstance, opts: { metrics: Metrics; token: string }): Promise<void> {
  app.get('/metrics', { config: { tenantless: true } }, async (request, reply) => {
    const header = request.headers.authorization;
    const presented = typeof header === 'string' && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
    if (presented === undefined || !safeEqual(presented, opts.token)) throw errors.invalidToken('/metrics needs Authorization: Bearer <KEYHALL_METRICS_TOKEN>');
    const { contentType, body } = await opts.metrics.scrape();
    return reply.type(contentType).send(body);
  });
}

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * The separate metrics listener (KEYHALL_METRICS_PORT): plain node:http, nothing but
 * `GET /metrics`; it resolves no tenant and shares nothing with the main listener.
 */
export async function startMetricsListener(metrics: Metrics, host: string, port: number): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = req.url?.split('?')[0];
    const answer = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
      res.end(body);
    };
    if (path !== '/metrics') return answer(404, JSON.stringify({ error: 'not_found', error_description: 'no such route' }));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return answer(405, JSON.stringify({ error: 'method_not_allowed', error_description: `${req.method} is not allowed here` }), { allow: 'GET, HEAD' });
    }
    metrics.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => answer(500, JSON.stringify({ error: 'server_error', error_description: 'metrics collection failed' })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
