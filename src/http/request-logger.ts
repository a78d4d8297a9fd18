/**
 * Fastify's per-request logger (`request.log`), made only when a request actually logs. Fastify
 * builds one pino child per request (binding its id); with our redaction paths each child costs a
 * redaction set-up and about 4 KB of garbage, on every request, although almost none logs (the
 * access line is written apart, access-log.ts). This stands in for that child and creates it on
 * the first call, with the same bindings and options, so what is logged is unchanged.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino';

class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get #log(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#log.level = level;
  }

  fatal(...args: Parameters<LogFn>): void {
    this.#log.fatal(...args);
  }

  error(...args: Parameters<LogFn>): void {
    this.#log.error(...args);
  }

  warn(...args: Parameters<LogFn>): void {
    this.#log.warn(...args);
  }

  info(...args: Parameters<LogFn>): void {
    this.#log.info(...args);
  }

  debug(...args: Parameters<LogFn>): void {
    this.#log.debug(...args);
  }

  trace(...args: Parameters<LogFn>): void {
    this.#log.trace(...args);
  }

  silent(...args: Parameters<LogFn>): void {
    this.#log.silent(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`. */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options);
}
