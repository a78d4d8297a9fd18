/**
 * CORS for the endpoints a browser app calls (/token, /revoke, /userinfo): the exact origin is
 * echoed for origins some client of the tenant lists in `allowed_origins`; any other origin gets
 * no CORS header at all. No credentials (cookies) are ever allowed. docs/oauth.md "Browser apps".
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserOrigins } from '../../oauth/cors.js';

export type CorsPolicy = Pick<BrowserOrigins, 'tenantAllows' | 'clientAllows'>;

/** Request headers a browser app may send: bearer or DPoP tokens, Basic credentials, form bodies. */
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, DPoP';
/** Response headers it may read: a DPoP nonce to retry with, and resource-server challenges. */
export const CORS_EXPOSE_HEADERS = 'DPoP-Nonce, WWW-Authenticate';
/** How long a browser may cache a preflight answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

const originOf = (request: FastifyRequest): string | undefined => {
  const o = request.headers.origin;
  return typeof o === 'string' && o !== '' ? o : undefined;
};

/**
 * Within a route plugin: answers CORS for `paths` (path → the methods it serves), preflight
 * `OPTIONS` included. Runs after tenant resolution; other routes of the plugin are untouched.
 */
export function browserCors(app: FastifyInstance, policy: CorsPolicy, paths: Record<string, string[]>): void {
  // Callback form: a request without Origin (servers, most of them) costs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    const methods = paths[request.routeOptions.url ?? ''];
    if (!methods) return done();
    // The answer depends on Origin: shared caches must key on it.
    reply.header('vary', 'Origin');
    const origin = originOf(request);
    if (!origin || !request.tenant) return done();
    policy.tenantAllows(request.tenant.id, origin).then((allowed) => {
      if (allowed) corsHeaders(request, reply, origin, methods);
      done();
    }, done);
  });
  for (const [url, methods] of Object.entries(paths)) {
    // A preflight, or a plain OPTIONS: 204 with Allow; CORS headers only from the hook above.
    app.options(url, async (_request, reply) =>
      reply
        .header('allow', [...methods, 'OPTIONS'].join(', '))
        .code(204)
        .send(),
    );
  }
}

/** The headers of an allowed cross-origin request: a preflight's, or an actual request's. */
function corsHeaders(request: FastifyRequest, reply: FastifyReply, origin: string, methods: string[]): void {
  reply.header('access-control-allow-origin', origin);
  if (request.method === 'OPTIONS') {
    reply
      .header('access-control-allow-methods', methods.join(', '))
      .header('access-control-allow-headers', CORS_ALLOW_HEADERS)
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
  } else {
    reply.header('access-control-expose-headers', CORS_EXPOSE_HEADERS);
  }
}

/**
 * Once the client is named (the `client_id` parameter or the Basic user): a cross-origin request
 * from an origin that client does not list loses its CORS headers, so the page cannot read the
 * answer. Returns false when it did, for the caller to refuse the request.
 */
export async function clientOriginAllowed(request: FastifyRequest, reply: FastifyReply, policy: CorsPolicy, clientId: string | undefined): Promise<boolean> {
  const origin = originOf(request);
  if (!origin || !request.tenant || clientId === undefined) return true;
  if (origin === new URL(request.tenant.issuer).origin) return true;
  if ((await policy.clientAllows(request.tenant.id, clientId, origin)) !== false) return true;
  reply.removeHeader('access-control-allow-origin');
  reply.removeHeader('access-control-expose-headers');
  return false;
}
