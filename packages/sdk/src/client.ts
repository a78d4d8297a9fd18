/**
 * The management API client: every /v1 operation of the served OpenAPI document, typed by the
 * `paths` that openapi-typescript generates from it (src/generated/management.ts, generated at
 * build time, never hand-kept). Errors are `KeyhallError`; 429 and 503 answers are retried with
 * backoff, honouring `Retry-After`; lists are async iterators over every page.
 */
import { KeyhallError } from './errors.js';
import type { paths } from './generated/management.js';

export type { components, operations, paths } from './generated/management.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The paths that have an operation for this method. */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: { responses: unknown } } ? P : never }[keyof paths];

/** The operation object of a path and method. */
export type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;

type Parameters<O> = O extends { parameters: infer X } ? X : never;
type PathParams<O> = Parameters<O> extends { path: infer X } ? X : never;
type QueryParams<O> = Parameters<O> extends { query?: infer X } ? X : never;
type JsonOf<C> = C extends { content: { 'application/json': infer J } } ? J : never;
/** The JSON body an operation takes. */
export type RequestBody<O> = O extends { requestBody: infer B } ? JsonOf<B> : O extends { requestBody?: infer B } ? JsonOf<B> : never;
/** The JSON of an operation's success answer (undefined for 204). */
export type ResponseBody<O> = O extends { responses: infer R }
  ? R extends { 200: infer S }
    ? JsonOf<S>
    : R extends { 201: infer S }
      ? JsonOf<S>
      : R extends { 202: infer S }
        ? JsonOf<S>
        : undefined
  : never;

/** What a call passes: path parameters, query and body when the operation has them. */
export type RequestOptions<O> = ([PathParams<O>] extends [never] ? { path?: undefined } : { path: PathParams<O> }) &
  ([QueryParams<O>] extends [never] ? { query?: undefined } : { query?: QueryParams<O> }) &
  ([RequestBody<O>] extends [never] ? { body?: undefined } : { body: RequestBody<O> }) & {
    headers?: Record<string, string>;
    signal?: AbortSignal;
  };

/** The options argument, optional when the operation needs nothing. */
type Args<O> = object extends RequestOptions<O> ? [options?: RequestOptions<O>] : [options: RequestOptions<O>];

/** The GET paths that answer a page (`{data, has_more, next_cursor}`) and take an `after` cursor. */
export type ListPaths = {
  [P in PathsWith<'get'>]: ResponseBody<Operation<P, 'get'>> extends { data: unknown[]; has_more: boolean; next_cursor: string | null }
    ? QueryParams<Operation<P, 'get'>> extends { after?: string }
      ? P
      : never
    : never;
}[PathsWith<'get'>];

/** One item of a list path's pages. */
export type ListItem<P extends ListPaths> = ResponseBody<Operation<P, 'get'>> extends { data: Array<infer T> } ? T : never;

export interface KeyhallClientOptions {
  /** The tenant's issuer URL (`https://id.example.com`): /v1 is under it. */
  baseUrl: string;
  /** A platform or organization API key (`sk_live_…`). */
  apiKey: string;
  /** How many times a 429 or 503 answer is retried (default 2). */
  maxRetries?: number;
  /** The longest wait, in milliseconds, the client accepts before a retry (default 60 000): a longer `Retry-After` fails at once. */
  maxRetryDelayMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
  /** How the client waits between attempts (default a timer); tests pass one that records the delay. */
  sleep?: (ms: number) => Promise<void>;
}

/** `Retry-After` as milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterMs(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

const RETRYABLE = new Set([429, 503]);

export class KeyhallClient {
  private readonly base: string;
  private readonly options: KeyhallClientOptions;

  constructor(options: KeyhallClientOptions) {
    this.options = options;
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  get<P extends PathsWith<'get'>>(path: P, ...[options]: Args<Operation<P, 'get'>>): Promise<ResponseBody<Operation<P, 'get'>>> {
    return this.request('GET', path, options) as Promise<ResponseBody<Operation<P, 'get'>>>;
  }

  post<P extends PathsWith<'post'>>(path: P, ...[options]: Args<Operation<P, 'post'>>): Promise<ResponseBody<Operation<P, 'post'>>> {
    return this.request('POST', path, options) as Promise<ResponseBody<Operation<P, 'post'>>>;
  }

  put<P extends PathsWith<'put'>>(path: P, ...[options]: Args<Operation<P, 'put'>>): Promise<ResponseBody<Operation<P, 'put'>>> {
    return this.request('PUT', path, options) as Promise<ResponseBody<Operation<P, 'put'>>>;
  }

  patch<P extends PathsWith<'patch'>>(path: P, ...[options]: Args<Operation<P, 'patch'>>): Promise<ResponseBody<Operation<P, 'patch'>>> {
    return this.request('PATCH', path, options) as Promise<ResponseBody<Operation<P, 'patch'>>>;
  }

  delete<P extends PathsWith<'delete'>>(path: P, ...[options]: Args<Operation<P, 'delete'>>): Promise<ResponseBody<Operation<P, 'delete'>>> {
    return this.request('DELETE', path, options) as Promise<ResponseBody<Operation<P, 'delete'>>>;
  }

  /**
   * Every item of a list, page after page (`after` = the previous page's `next_cursor`, until
   * `has_more` is false). `query.limit` sets the page size.
   */
  async *list<P extends ListPaths>(path: P, ...[options]: Args<Operation<P, 'get'>>): AsyncGenerator<ListItem<P>, void, undefined> {
    const opts = (options ?? {}) as { path?: Record<string, unknown>; query?: Record<string, unknown>; headers?: Record<string, string>; signal?: AbortSignal };
    let after = opts.query?.after as string | undefined;
    for (;;) {
      const page = (await this.request('GET', path, { ...opts, query: { ...opts.query, ...(after !== undefined ? { after } : {}) } })) as {
        data: ListItem<P>[];
        has_more: boolean;
        next_cursor: string | null;
      };
      yield* page.data;
      if (!page.has_more || page.next_cursor === null) return;
      after = page.next_cursor;
    }
  }

  private url(path: string, params: Record<string, unknown> | undefined, query: Record<string, unknown> | undefined): string {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params?.[name];
      if (value === undefined || value === null) throw new TypeError(`${path}: path parameter ${name} is missing`);
      return encodeURIComponent(String(value));
    });
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) search.append(k, String(item));
    }
    const qs = search.toString();
    return `${this.base}${filled}${qs ? `?${qs}` : ''}`;
  }

  private async request(method: string, path: string, options: unknown): Promise<unknown> {
    const opts = (options ?? {}) as {
      path?: Record<string, unknown>;
      query?: Record<string, unknown>;
      body?: unknown;
      headers?: Record<string, string>;
      signal?: AbortSignal;
    };
    const url = this.url(path, opts.path, opts.query);
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers, authorization: `Bearer ${this.options.apiKey}` };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const doFetch = this.options.fetch ?? fetch;
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const maxRetries = this.options.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const res = await doFetch(url, { method, headers, ...(body !== undefined ? { body } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
      if (res.ok) {
        if (res.status === 204) return undefined;
        const text = await res.text();
        return text === '' ? undefined : JSON.parse(text);
      }
      if (RETRYABLE.has(res.status) && attempt < maxRetries) {
        // 429 and 503 are answered before any work is done, so retrying a POST is safe.
        const hinted = retryAfterMs(res.headers.get('retry-after'));
        const delay = hinted ?? Math.min(8_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
        if (delay <= (this.options.maxRetryDelayMs ?? 60_000)) {
          await res.body?.cancel();
          await sleep(delay);
          continue;
        }
      }
      throw await errorOf(res);
    }
  }
}

async function errorOf(res: Response): Promise<KeyhallError> {
  const text = await res.text();
  try {
    const json = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (typeof json.error === 'string') {
      return new KeyhallError(res.status, json.error, typeof json.error_description === 'string' ? json.error_description : undefined);
    }
  } catch {
    // not JSON: described below
  }
  return new KeyhallError(res.status, 'unexpected_response', `the server answered ${res.status} without an error body`);
}
