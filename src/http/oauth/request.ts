/** FastifyRequest → the framework-free request shape of the OAuth core. */
import formbody from '@fastify/formbody';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oauthErrors } from '../../oauth/errors.js';
import type { OAuthHttpRequest } from '../../oauth/types.js';

const FORM = 'application/x-www-form-urlencoded';

/**
 * The headers the OAuth core reads (Authorization and DPoP), each as the list of its values, so a
 * repeated one is refused as repeated: Node's parsed headers keep only the first Authorization and
 * join repeated unknown headers. Node's `headersDistinct` would copy every header of the request
 * into an array on every request for the same answer about these two.
 */
export function oauthHeaders(raw: IncomingMessage): OAuthHttpRequest['headers'] {
  let authorization: string[] | undefined;
  let dpop: string[] | undefined;
  const all = raw.rawHeaders;
  for (let i = 0; i + 1 < all.length; i += 2) {
    const name = all[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') (authorization ??= []).push(all[i + 1]!);
    else if (name.length === 4 && name.toLowerCase() === 'dpop') (dpop ??= []).push(all[i + 1]!);
  }
  return { authorization, dpop };
}

/** OAuth endpoints take form bodies only (RFC 6749 §3.2); a JSON body is `invalid_request`. */
export function formRequest(request: FastifyRequest): OAuthHttpRequest {
  const type = String(request.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== FORM) throw oauthErrors.invalidRequest(`the body must be ${FORM}`);
  const body = (request.body ?? {}) as OAuthHttpRequest['body'];
  return {
    method: request.method,
    path: request.url.split('?')[0]!,
    headers: oauthHeaders(request.raw),
    body: typeof body === 'object' ? body : {},
  };
}

/** Token responses are never cached (RFC 6749 §5.1). */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/**
 * Within a protocol endpoint's plugin: form bodies are parsed and every other body is accepted
 * unparsed, so `formRequest` answers it with 400 invalid_request naming the form type (RFC 6749
 * §3.2) instead of a JSON parse error or 415 from the shared parsers.
 */
export async function formBodiesOnly(app: FastifyInstance, bodyLimit?: number): Promise<void> {
  app.removeAllContentTypeParsers();
  await app.register(formbody, bodyLimit === undefined ? {} : { bodyLimit });
  app.addContentTypeParser('*', { parseAs: 'buffer', ...(bodyLimit === undefined ? {} : { bodyLimit }) }, (_request, _body, done) => done(null, undefined));
}
