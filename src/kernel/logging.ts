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

/** How long lines wait to be joined into one write, and how much may wait. */
const BATCH_MS = 25;
const BATCH_BYTES = 64 * 1024;

/**
 * The log destination of a process: the caller's stream (tests capture lines), or stdout written
 * asynchronously (pino's sonic-boom, `sync: false`): a request never waits for a write system
 * call. Lines are joined and handed over in one write every 25 ms, or as soon as 64 KiB wait (a
 * write system call costs more than a line: one per request was 3 % of a /token request's CPU),
 * so a line reaches stdout within 25 ms. Whatever is still buffered is written out synchronously
 * on shutdown and on fatal errors (`flush`); a SIGKILL loses at most the last 25 ms of lines.
 */
export function openLogDestination(stream?: NodeJS.WritableStream): LogDestination {
  if (stream) return { stream, flush: () => undefined };
  const dest = pino.destination({ dest: 1, sync: false });
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const handOver = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    dest.write(lines);
  };
  const batching = {
    write(chunk: string): boolean {
      pending += chunk;
      if (pending.length >= BATCH_BYTES) handOver();
      else if (timer === undefined) timer = setTimeout(handOver, BATCH_MS);
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
