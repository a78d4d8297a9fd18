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
