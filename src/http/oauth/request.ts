/** FastifyRequest → the framework-free request shape of the OAuth core. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { oauthErrors } from '../../oauth/errors.js';
import type { OAuthHttpRequest } from '../../oauth/types.js';

const FORM = 'application/x-www-form-urlencoded';

/** OAuth endpoints take form bodies only (RFC 6749 §3.2); a JSON body is `invalid_request`. */
export function formRequest(request: FastifyRequest): OAuthHttpRequest {
  const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== FORM) throw oauthErrors.invalidRequest(`the body must be ${FORM}`);
  const body = (request.body ?? {}) as OAuthHttpRequest['body'];
  return {
    method: request.method,
    path: request.url.split('?')[0]!,
    // headersDistinct keeps repeated headers (Node drops repeated Authorization headers otherwise).
    headers: request.raw.headersDistinct,
    body: typeof body === 'object' ? body : {},
  };
}

/** Token responses are never cached (RFC 6749 §5.1). */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}
