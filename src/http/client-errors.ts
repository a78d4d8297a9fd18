import http from 'node:http';
import type { Socket } from 'node:net';
import { type AppError, errors } from '../kernel/errors.js';
import { isScimTarget, SCIM_CONTENT_TYPE, ScimError } from '../scim/errors.js';

/** How long a connection refused at the HTTP parser stays open for the client to read the answer. */
const LINGER_MS = 2_000;

/** The AppError for what Node's HTTP parser refused before Fastify saw a request. */
function errorOf(err: { code?: string }): AppError {
  if (err.code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge(http.maxHeaderSize);
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout();
  return errors.invalidRequest('malformed HTTP request');
}

/**
 * Fastify's `clientErrorHandler`: requests Node's parser refuses (headers or URL over
 * `maxHeaderSize`, malformed request lines, timeouts) get Keyhall's error body too — a complete
 * HTTP/1.1 response with `{error, error_description}` (the SCIM error under /scim/v2, when the
 * request line says so) and `Connection: close`. The connection is half-closed and read to the
 * end so the client sees the answer instead of a reset, then destroyed after a short linger.
 */
export function clientErrorHandler(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const appError = errorOf(err);
  const head = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.subarray(0, 64).toString('latin1') : '';
  const scim = isScimTarget(/^[A-Z]+ (\S*)/.exec(head)?.[1] ?? '');
  const body = JSON.stringify(scim ? new ScimError(appError.status, undefined, appError.description ?? appError.code).toBody() : appError.toBody());
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${appError.status} ${http.STATUS_CODES[appError.status] ?? 'Error'}\r\n` +
        `Content-Type: ${scim ? SCIM_CONTENT_TYPE : 'application/json; charset=utf-8'}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
        body,
    );
  }
  socket.on('error', () => undefined);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
