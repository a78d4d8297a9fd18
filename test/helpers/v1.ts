import type { HttpResponse } from './http.js';
import type { TestServer } from './server.js';

export type Api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResponse>;

/** A /v1 client for one API key on the test server's main tenant (or another host). */
export function v1(s: TestServer, key: string | undefined, host?: string): Api {
  return (method, path, body, headers = {}) =>
    s.request({
      method,
      path: `/v1${path}`,
      ...(host ? { host } : {}),
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
}

/** Asserts an error response's status and `error` code. */
export function expectError(r: HttpResponse, status: number, error: string): void {
  if (r.status !== status || r.json().error !== error) {
    throw new Error(`expected ${status} ${error}, got ${r.status} ${r.text}`);
  }
}
