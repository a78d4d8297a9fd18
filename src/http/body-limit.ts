import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Answers sent before the request body has arrived (a 413 for a body over KEYHALL_BODY_LIMIT,
 * whether Content-Length announced it or a chunked body outgrew the limit while streaming)
 * must reach the client.
 *
 * Fastify answers such a request early, with `Connection: close`. Node's http server then calls
 * `socket.destroySoon()` once the response is flushed: the socket is closed while the client is
 * still sending, the kernel answers the next incoming bytes with a TCP RST, and the client gets
 * EPIPE/ECONNRESET on its next write; a client that reads only after sending (most blocking
 * clients) never sees the 413, and one that reads concurrently sees it only by luck of timing.
 *
 * So, for such responses, closing becomes a lingering close (like nginx's and Apache's): the
 * answer is sent as before, the rest of the body is read and discarded, and the connection is
 * ended only once the client has sent it all. The draining is bounded: past `maxBytes` more or
 * `maxMs`, the socket is half-closed (FIN after the flushed answer, still reading), and a client
 * that keeps sending `graceMs` after that is cut off.
 *
 * The hook point is Node's own: `resOnFinish` (lib/_http_server.js) closes a `Connection: close`
 * response's socket through `socket.destroySoon()`, which is replaced on sockets that carry such
 * a request. Should Node ever close differently, the wrapper is simply not called.
 */
export interface LingerLimits {
  maxBytes: number;
  maxMs: number;
  graceMs: number;
}

export const DEFAULT_LINGER: LingerLimits = { maxBytes: 64 * 1024 * 1024, maxMs: 10_000, graceMs: 2_000 };

const CHECK_EVERY_MS = 50;
/** The request of this socket whose body was not complete when its answer was sent. */
const kUnread = Symbol('keyhall.unreadRequest');
const kPatched = Symbol('keyhall.lingeringClose');
type LingeringSocket = Socket & { [kUnread]?: IncomingMessage; [kPatched]?: true };

function linger(socket: Socket, req: IncomingMessage, close: () => void, limits: LingerLimits): void {
  const start = socket.bytesRead;
  const timers: NodeJS.Timeout[] = [];
  const watch = setInterval(() => {
    if (socket.bytesRead - start > limits.maxBytes) giveUp();
  }, CHECK_EVERY_MS).unref();
  const stopTimers = () => {
    clearInterval(watch);
    timers.forEach((t) => clearTimeout(t));
  };
  const done = () => {
    stopTimers();
    // The whole body is in: no byte will arrive after the close to provoke a reset.
    if (!socket.destroyed) close();
  };
  const giveUp = () => {
    stopTimers();
    req.removeListener('end', done);
    if (socket.destroyed) return;
    socket.end();
    timers.push(setTimeout(() => socket.destroy(), limits.graceMs).unref());
  };
  timers.push(setTimeout(giveUp, limits.maxMs).unref());
  socket.once('close', stopTimers);
  req.once('end', done);
  // Discard what is left (Node already does for a body nobody read; this also covers a chunked
  // body that Fastify's parser stopped listening to at the limit).
  req.resume();
}

/** Registers the lingering close on every response sent before its request body was complete. */
export function drainUnreadBodies(app: FastifyInstance, limits: LingerLimits = DEFAULT_LINGER): void {
  app.addHook('onSend', (request, _reply, payload, done) => {
    const req = request.raw;
    const socket = req.socket as LingeringSocket | null;
    if (req.complete || !socket || socket.destroyed) return done(null, payload);
    if (!socket[kPatched]) {
      socket[kPatched] = true;
      const destroySoon = socket.destroySoon.bind(socket);
      socket.destroySoon = () => {
        const unread = socket[kUnread];
        socket[kUnread] = undefined;
        if (unread && !unread.complete && !unread.destroyed) linger(socket, unread, destroySoon, limits);
        else destroySoon();
      };
    }
    socket[kUnread] = req;
    done(null, payload);
  });
}
