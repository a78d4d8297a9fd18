/**
 * The load client, in its own process (`tsx bench/load.ts`, driven over IPC by bench/run.ts) so it
 * never shares an event loop with a server under test. autocannon drives the single-request
 * scenarios; the code flow (five requests per login, cookies, a form) has its own small loop of
 * virtual users on keep-alive connections.
 *
 * DPoP: the proofs (ES256, one key, a fresh jti each) are generated here *before* the timed run
 * and handed out one per request, so neither the client's signing nor its CPU is in the
 * measurement; the server still verifies every proof and records every jti.
 */
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import http from 'node:http';
import autocannon from 'autocannon';

export interface LoadResult {
  /** Completed requests (or code flows) per second. */
  rate: number;
  total: number;
  p50: number;
  p99: number;
  failures: number;
  /** First failing status/body, to diagnose a bench setup. */
  sample?: string;
}

export type LoadSpec =
  | ({ kind: 'static' } & Common & { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string })
  | ({ kind: 'dpop' } & Common & { path: string; headers: Record<string, string>; body: string; htu: string; expectedRate: number })
  | ({ kind: 'refresh' } & Common & { path: string; headers: Record<string, string>; refreshTokens: string[] })
  | ({ kind: 'roundrobin' } & Common & { path: string; targets: Array<{ host: string; authorization: string }>; body: string })
  | ({ kind: 'codeflow' } & Common & { host: string; clientId: string; authorization: string; email: string; password: string; redirectUri: string });

interface Common {
  port: number;
  durationSeconds: number;
  connections: number;
}

type Req = { method?: string; path?: string; headers?: Record<string, string>; body?: string };

function cannon(
  spec: Common & { method: string; path: string; headers: Record<string, string>; body?: string },
  extra: Partial<autocannon.Options> = {},
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let sample: string | undefined;
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${spec.port}${spec.path}`,
        connections: spec.connections,
        duration: spec.durationSeconds,
        method: spec.method as 'POST',
        headers: spec.headers,
        body: spec.body,
        ...extra,
      },
      (err, r) => {
        if (err) return reject(err);
        resolve({ rate: r.requests.average, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, failures: r.non2xx + r.errors, sample });
      },
    );
    (instance as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, status: number) => {
      if (status >= 300 && !sample) sample = `status ${status}`;
    });
  });
}

function dpopProofs(htu: string, count: number): string[] {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } })).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const input = `${header}.${Buffer.from(JSON.stringify({ jti: randomUUID(), htm: 'POST', htu, iat })).toString('base64url')}`;
    out.push(`${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`);
  }
  return out;
}

async function dpop(spec: Extract<LoadSpec, { kind: 'dpop' }>): Promise<LoadResult> {
  const proofs = dpopProofs(spec.htu, Math.ceil(spec.expectedRate * spec.durationSeconds * 1.5) + 1000);
  let next = 0;
  return cannon(
    { ...spec, method: 'POST' },
    {
      requests: [
        {
          setupRequest: (req: Req) => {
            // Out of proofs: a replayed jti, which the server must refuse (counted as a failure).
            req.headers = { ...spec.headers, dpop: proofs[next++ % proofs.length]! };
            return req as never;
          },
        },
      ] as never,
    },
  );
}

/**
 * Refresh chains outlive one run (every rotated token is single-use), keyed by the first token of
 * the pool. A request takes a current token from the queue; its response puts the successor back.
 * (autocannon resets its per-connection context after every request, so the queue is global.)
 * A chain whose request is cut off at the end of a run is lost, so the pool holds several per
 * connection.
 */
const chains = new Map<string, string[]>();

function refresh(spec: Extract<LoadSpec, { kind: 'refresh' }>): Promise<LoadResult> {
  const pool = spec.refreshTokens[0]!;
  if (!chains.has(pool)) chains.set(pool, [...spec.refreshTokens]);
  const queue = chains.get(pool)!;
  return cannon(
    { ...spec, method: 'POST' },
    {
      requests: [
        {
          setupRequest: (req: Req) => {
            const rt = queue.shift();
            if (!rt) throw new Error('out of refresh-token chains: raise BENCH_REFRESH_CHAINS');
            req.body = `grant_type=refresh_token&refresh_token=${rt}`;
            return req as never;
          },
          onResponse: (status: number, body: string) => {
            if (status === 200) queue.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
          },
        },
      ] as never,
    },
  );
}

function roundRobin(spec: Extract<LoadSpec, { kind: 'roundrobin' }>): Promise<LoadResult> {
  let next = 0;
  return cannon(
    { ...spec, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    {
      requests: [
        {
          setupRequest: (req: Req) => {
            const t = spec.targets[next++ % spec.targets.length]!;
            req.headers = { 'content-type': 'application/x-www-form-urlencoded', host: t.host, authorization: t.authorization };
            return req as never;
          },
        },
      ] as never,
    },
  );
}

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function call(agent: http.Agent, port: number, host: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: '127.0.0.1', port, method, path, setHost: false, headers: { host, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const entities = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#96;/g, '`')
    .replace(/&amp;/g, '&');

/** One login: PAR → /authorize → login page → login POST (argon2) → code → /token with PKCE. */
async function oneFlow(agent: http.Agent, spec: Extract<LoadSpec, { kind: 'codeflow' }>): Promise<void> {
  const verifier = randomUUID() + randomUUID();
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const fail = (step: string, r: Res) => new Error(`${step}: ${r.status} ${r.text.slice(0, 200)}`);
  const par = await call(
    agent,
    spec.port,
    spec.host,
    'POST',
    '/par',
    { ...form, authorization: spec.authorization },
    new URLSearchParams({
      response_type: 'code',
      client_id: spec.clientId,
      redirect_uri: spec.redirectUri,
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString(),
  );
  if (par.status !== 201) throw fail('par', par);
  const requestUri = (JSON.parse(par.text) as { request_uri: string }).request_uri;
  const auth = await call(
    agent,
    spec.port,
    spec.host,
    'GET',
    `/authorize?client_id=${encodeURIComponent(spec.clientId)}&request_uri=${encodeURIComponent(requestUri)}`,
    {},
  );
  if (auth.status !== 303 || !auth.headers.location) throw fail('authorize', auth);
  const cookies = new Map<string, string>();
  const keep = (r: Res) => {
    for (const c of r.headers['set-cookie'] ?? []) {
      const pair = c.split(';')[0]!;
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  };
  keep(auth);
  const cookieHeader = () => ({ cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') });
  const page = await call(agent, spec.port, spec.host, 'GET', auth.headers.location, cookieHeader());
  if (page.status !== 200) throw fail('login page', page);
  keep(page);
  const m = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(page.text);
  if (!m) throw fail('login form', page);
  const fields: Record<string, string> = {};
  for (const h of m[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[h[1]!] = entities(h[2]!);
  fields.email = spec.email;
  fields.password = spec.password;
  const login = await call(
    agent,
    spec.port,
    spec.host,
    'POST',
    entities(m[1]!),
    { ...form, origin: `http://${spec.host}`, ...cookieHeader() },
    new URLSearchParams(fields).toString(),
  );
  // A provider may resume the authorization at another of its own URLs before it redirects to
  // the client (node-oidc-provider: /authorize/<uid>): followed, with the cookies, as a browser would.
  let done = login;
  keep(login);
  for (
    let hops = 0;
    hops < 3 && (done.status === 302 || done.status === 303) && done.headers.location && !done.headers.location.startsWith(spec.redirectUri);
    hops++
  ) {
    const next = new URL(done.headers.location, `http://${spec.host}`);
    if (next.host !== spec.host) break;
    done = await call(agent, spec.port, spec.host, 'GET', next.pathname + next.search, cookieHeader());
    keep(done);
  }
  const location = done.headers.location;
  if ((done.status !== 303 && done.status !== 302) || !location?.startsWith(spec.redirectUri)) throw fail('login', done);
  const code = new URL(location).searchParams.get('code');
  if (!code) throw fail('callback', done);
  const token = await call(
    agent,
    spec.port,
    spec.host,
    'POST',
    '/token',
    { ...form, authorization: spec.authorization },
    new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: spec.redirectUri }).toString(),
  );
  if (token.status !== 200) throw fail('token', token);
}

async function codeFlow(spec: Extract<LoadSpec, { kind: 'codeflow' }>): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const latencies: number[] = [];
  let failures = 0;
  let sample: string | undefined;
  const end = performance.now() + spec.durationSeconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await oneFlow(agent, spec);
          latencies.push(performance.now() - t0);
        } catch (err) {
          failures++;
          sample ??= (err as Error).message;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => (latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!) : 0);
  return { rate: latencies.length / elapsed, total: latencies.length, p50: pct(0.5), p99: pct(0.99), failures, sample };
}

export function runSpec(spec: LoadSpec): Promise<LoadResult> {
  switch (spec.kind) {
    case 'static':
      return cannon(spec);
    case 'dpop':
      return dpop(spec);
    case 'refresh':
      return refresh(spec);
    case 'roundrobin':
      return roundRobin(spec);
    case 'codeflow':
      return codeFlow(spec);
  }
}

if (process.send) {
  process.on('message', (m: { id: number; spec?: LoadSpec; stop?: boolean }) => {
    if (m.stop) return process.disconnect();
    runSpec(m.spec!).then(
      (value) => process.send!({ id: m.id, value }),
      (err: Error) => process.send!({ id: m.id, error: err.message }),
    );
  });
  process.send({ ready: true });
}
