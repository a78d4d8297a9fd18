import { type Logger, type LoggerOptions, pino } from 'pino';

/**
 * Logger options shared by the server and the CLI. Credentials never reach a log line: the
 * Authorization, Cookie, DPoP and Set-Cookie headers and any secret-shaped field are redacted.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers.dpop',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.client_secret',
  '*.secret',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.api_key',
  '*.platform_api_key',
  '*.key',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
}

export type { Logger };

/** The process logger for work outside requests (the webhook dispatcher); requests log through Fastify. */
export function createLogger(level: string, stream?: NodeJS.WritableStream): Logger {
  return stream ? pino(loggerOptions(level), stream) : pino(loggerOptions(level));
}

/** Where log lines go, and how to push out what is still buffered. */
export interface LogDestination {
  stream: NodeJS.WritableStream;
  /** Writes out buffered lines synchronously (shutdown, fatal errors); a no-op for a caller's stream. */
  flush(): void;
}

/**
 * The log destination of a process: the caller's stream (tests capture lines), or stdout written
 * asynchronously (pino's sonic-boom, `sync: false`): a request never waits for a write system
 * call. Lines logged during one turn of the event loop are joined and handed over in one write
 * at its end (under load a turn serves many requests, and a write system call costs more than a
 * line), so a line reaches stdout within a turn. Whatever is still buffered is written out
 * synchronously on shutdown and on fatal errors (`flush`).
 */
export function openLogDestination(stream?: NodeJS.WritableStream): LogDestination {
  if (stream) return { stream, flush: () => undefined };
  const dest = pino.destination({ dest: 1, sync: false });
  let pending = '';
  let scheduled = false;
  const handOver = () => {
    scheduled = false;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    dest.write(lines);
  };
  const batching = {
    write(chunk: string): boolean {
      pending += chunk;
      if (!scheduled) {
        scheduled = true;
        setImmediate(handOver);
      }
      return true;
    },
  };
  return {
    stream: batching as unknown as NodeJS.WritableStream,
    flush: () => {
      try {
        handOver();
        dest.flushSync();
      } catch {
        // Not open yet, or already closed: nothing is buffered that could still be written.
      }
    },
  };
}
