import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type AppError, errors, isAppError } from '../kernel/errors.js';
import { parseBasic } from '../oauth/client-auth/presented.js';

/** Maps what Fastify throws for malformed requests to our error type (always a 4xx). */
function fromFastify(err: FastifyError): AppError | undefined {
  // Validation failures are AppErrors already (http/validation.ts).
  if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return errors.invalidRequest('the body is not valid JSON');
  }
  if (typeof err.statusCode !== 'number' || err.statusCode < 400 || err.statusCode >= 500) return undefined;
  if (err.statusCode === 413) return errors.payloadTooLarge();
  if (err.statusCode === 415) return errors.unsupportedMediaType('unsupported content type');
  return errors.invalidRequest('malformed request');
}

/** The protocol endpoints whose refusals are logged with their OAuth code (docs/oauth.md). */
const PROTOCOL_PATHS = new Set(['/token', '/par', '/authorize', '/introspect', '/revoke', '/userinfo']);
/** What a client_id looks like; anything else (or a long value) is not logged. */
const CLIENT_ID_SHAPE = /^[\x21-\x7e]{1,200}$/;

function first(value: unknown): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' ? v : undefined;
}

/** The payload member of a compact JWT, not verified (a log hint only), or undefined. */
function unverifiedClaim(jwt: string | undefined, claim: string): string | undefined {
  const part = jwt?.split('.')[1];
  if (!part || part.length > 8192) return undefined;
  try {
    return first((JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>)[claim]);
  } catch {
    return undefined;
  }
}

/**
 * The client a protocol request claims to come from — the `client_id` parameter, the user part
 * of Basic credentials, the `iss` of a client assertion, or the `client_id` of the presented
 * access token — never a secret, an assertion or a token. Not authenticated: a log hint.
 */
function claimedClientId(request: FastifyRequest): string | undefined {
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
  const query = (typeof request.query === 'object' && request.query !== null ? request.query : {}) as Record<string, unknown>;
  const authorization = first(request.headers.authorization);
  let id = first(body.client_id) ?? first(query.client_id);
  if (id === undefined && authorization && /^basic /i.test(authorization)) {
    try {
      id = parseBasic(authorization).clientId;
    } catch {
      id = undefined;
    }
  }
  id ??= unverifiedClaim(first(body.client_assertion), 'iss');
  if (id === undefined && authorization && /^(bearer|dpop) /i.test(authorization)) id = unverifiedClaim(authorization.split(' ')[1], 'client_id');
  return id !== undefined && CLIENT_ID_SHAPE.test(id) ? id : undefined;
}

/** The error code each failed request was answered with, for its access-log line (access-log.ts). */
export const errorCodes = new WeakMap<FastifyRequest, string>();

/**
 * Logs why a protocol endpoint refused a request (every 4xx): the OAuth `error` code, the claimed
 * `client_id` and the tenant. Descriptions are not logged here (they may echo input); the
 * request's own log line carries method, path and status.
 */
export function logProtocolRefusal(request: FastifyRequest, status: number, code: string): void {
  errorCodes.set(request, code);
  if (status < 400 || status >= 500) return;
  if (!PROTOCOL_PATHS.has(request.url.split('?')[0]!)) return;
  request.log.info({ oauth_error: code, status, client_id: claimedClientId(request) ?? null, tenant: request.tenant?.id ?? null }, 'oauth request refused');
}

/**
 * The AppError for anything thrown: itself, a mapped Fastify error, or `server_error` (logged
 * with its stack). A cause or detail attached to an AppError is logged here, never sent.
 */
export function toAppError(err: unknown, request: FastifyRequest): AppError {
  const appError = isAppError(err) ? err : fromFastify(err as FastifyError);
  if (!appError) {
    request.log.error({ err }, 'unhandled error');
    return errors.serverError();
  }
  if (appError.detail !== undefined || appError.cause !== undefined) {
    const level = appError.status >= 500 ? 'error' : 'info';
    request.log[level]({ error: appError.code, detail: appError.detail, err: appError.cause }, 'request refused');
  }
  return appError;
}

/** The single error renderer: `{error, error_description?}` JSON, never a stack trace. */
export function renderError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = toAppError(err, request);
  logProtocolRefusal(request, appError.status, appError.code);
  for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
  return reply.code(appError.status).header('cache-control', 'no-store').type('application/json').send(appError.toBody());
}
