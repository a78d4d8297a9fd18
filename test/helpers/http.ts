import http from 'node:http';

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json(): any;
}

/**
 * A raw HTTP request to 127.0.0.1:<port> with any Host header (fetch cannot set Host).
 */
export function request(
  port: number,
  opts: { host?: string; method?: string; path: string; headers?: Record<string, string | string[]>; body?: string | Buffer },
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...(opts.headers ?? {}) };
    if (opts.host !== undefined) headers.host = opts.host;
    const req = http.request({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers, setHost: opts.host === undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** GET a URL with fetch and parse its JSON body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function getJson(url: string, init?: RequestInit): Promise<any> {
  const r = await fetch(url, init);
  return r.json();
}

/**
 * A fetch that sends every request to 127.0.0.1:<port> with the URL's host as Host, as a
 * TLS-terminating proxy in front of the server would: a client given it reaches a tenant whose
 * issuer is `https://<host>` on the plain-HTTP test server, with nothing process-wide changed.
 */
export function fetchVia(port: number): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const body = req.body === null ? undefined : Buffer.from(await req.arrayBuffer());
    const headers: Record<string, string> = { ...Object.fromEntries(req.headers), 'content-length': String(body?.length ?? 0) };
    const r = await request(port, { host: url.host, method: req.method, path: `${url.pathname}${url.search}`, headers, ...(body ? { body } : {}) });
    const answer = new Headers();
    for (const [name, value] of Object.entries(r.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, v);
    }
    return new Response([101, 204, 205, 304].includes(r.status) ? null : r.text, { status: r.status, headers: answer });
  };
}
