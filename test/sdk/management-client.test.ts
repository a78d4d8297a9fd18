/**
 * The SDK's management client: against `keyhall serve` (typed calls, KeyhallError, paging over
 * 250 organizations), and against a local HTTP server for the retries (429 and 503 with and
 * without Retry-After; the wait goes through an injected sleep, so nothing sleeps).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KeyhallClient, KeyhallError, retryAfterMs } from '../../packages/sdk/src/index.js';
import { type Keyhall, startKeyhall } from '../guides/guide.js';

async function rejection(p: Promise<unknown>): Promise<KeyhallError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KeyhallError, String(err));
    return err;
  }
  assert.fail('no error');
}

describe('sdk: management client against keyhall serve', () => {
  let k: Keyhall;
  let client: KeyhallClient;
  before(async () => {
    k = await startKeyhall();
    client = new KeyhallClient({ baseUrl: k.issuer, apiKey: k.apiKey });
  });
  after(() => k?.close());

  it('creates, reads, updates and deletes with typed path parameters and bodies', async () => {
    const org = await client.post('/v1/organizations', { body: { name: 'Acme', slug: 'acme' } });
    assert.match(org.id, /^org_/);
    const got = await client.get('/v1/organizations/{orgId}', { path: { orgId: org.id } });
    assert.deepEqual([got.name, got.slug], ['Acme', 'acme']);
    const patched = await client.patch('/v1/organizations/{orgId}', { path: { orgId: org.id }, body: { name: 'Acme Corp' } });
    assert.equal(patched.name, 'Acme Corp');
    assert.equal(await client.delete('/v1/organizations/{orgId}', { path: { orgId: org.id } }), undefined);
  });

  it('errors are KeyhallError with the status, error and error_description of the answer', async () => {
    const missing = await rejection(client.get('/v1/organizations/{orgId}', { path: { orgId: 'org_0nothing' } }));
    assert.equal(missing.status, 404);
    assert.equal(missing.error, 'not_found');
    const invalid = await rejection(client.post('/v1/organizations', { body: { name: '' } }));
    assert.deepEqual([invalid.status, invalid.error], [400, 'invalid_request']);
    assert.match(invalid.error_description ?? '', /name/);
    const unknownKey = await rejection(new KeyhallClient({ baseUrl: k.issuer, apiKey: 'sk_live_wrong' }).get('/v1/organizations'));
    assert.equal(unknownKey.status, 401);
  });

  it('list() iterates over every page: 250 organizations, 100 a page, each once and in order', async () => {
    const created: string[] = [];
    for (let i = 0; i < 250; i += 25) {
      const batch = await Promise.all(Array.from({ length: 25 }, (_, j) => client.post('/v1/organizations', { body: { name: `Org ${i + j}` } })));
      created.push(...batch.map((o) => o.id));
    }
    const pages: string[] = [];
    const counting = new KeyhallClient({
      baseUrl: k.issuer,
      apiKey: k.apiKey,
      fetch: (input, init) => {
        pages.push(String(input));
        return fetch(input, init);
      },
    });
    const seen: string[] = [];
    for await (const org of counting.list('/v1/organizations', { query: { limit: 100 } })) seen.push(org.id);
    assert.equal(seen.length, 250);
    assert.equal(new Set(seen).size, 250);
    assert.deepEqual([...seen].sort(), [...created].sort());
    assert.equal(pages.length, 3, pages.join('\n'));
    assert.ok(!pages[0]!.includes('after='), 'the first page has no cursor');
    assert.ok(
      pages.slice(1).every((p) => /[?&]after=[\w-]+/.test(p)),
      'later pages pass next_cursor as after',
    );
    // Stopping early reads no further page.
    pages.length = 0;
    for await (const org of counting.list('/v1/organizations', { query: { limit: 10 } })) if (org) break;
    assert.equal(pages.length, 1);
  });
});

describe('sdk: retries on 429 and 503', () => {
  type Answer = { status: number; headers?: Record<string, string>; body: unknown };
  let server: http.Server;
  let base: string;
  let script: Answer[] = [];
  const requests: Array<{ method: string; url: string; body: string }> = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        requests.push({ method: req.method!, url: req.url!, body });
        const a = script.shift() ?? { status: 500, body: { error: 'server_error' } };
        res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(a.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const clientWith = (slept: number[], extra: { maxRetries?: number; maxRetryDelayMs?: number } = {}) =>
    new KeyhallClient({ baseUrl: base, apiKey: 'sk_live_test', sleep: async (ms) => void slept.push(ms), ...extra });
  const limited = (retryAfter?: string): Answer => ({
    status: 429,
    ...(retryAfter !== undefined ? { headers: { 'retry-after': retryAfter } } : {}),
    body: { error: 'rate_limited', error_description: 'too many requests' },
  });

  it('waits Retry-After seconds and sends the same request again', async () => {
    requests.length = 0;
    script = [limited('2'), limited('1'), { status: 201, body: { id: 'org_1', name: 'Acme' } }];
    const slept: number[] = [];
    const org = await clientWith(slept).post('/v1/organizations', { body: { name: 'Acme' } });
    assert.equal(org.id, 'org_1');
    assert.deepEqual(slept, [2000, 1000]);
    assert.equal(requests.length, 3);
    assert.ok(requests.every((r) => r.method === 'POST' && r.url === '/v1/organizations' && r.body === '{"name":"Acme"}'));
  });

  it('backs off exponentially (with jitter) on a 503 without Retry-After', async () => {
    script = [
      { status: 503, body: { error: 'temporarily_unavailable' } },
      { status: 503, body: { error: 'temporarily_unavailable' } },
      { status: 200, body: { data: [], has_more: false, next_cursor: null } },
    ];
    const slept: number[] = [];
    await clientWith(slept).get('/v1/organizations');
    assert.equal(slept.length, 2);
    assert.ok(slept[0]! >= 250 && slept[0]! <= 500, String(slept));
    assert.ok(slept[1]! >= 500 && slept[1]! <= 1000, String(slept));
  });

  it('gives up after maxRetries with the last answer as KeyhallError', async () => {
    script = [limited('1'), limited('1'), limited('1')];
    const slept: number[] = [];
    const err = await rejection(clientWith(slept).get('/v1/organizations'));
    assert.deepEqual([err.status, err.error, err.error_description], [429, 'rate_limited', 'too many requests']);
    assert.deepEqual(slept, [1000, 1000]);
  });

  it('does not wait longer than maxRetryDelayMs: a longer Retry-After fails at once', async () => {
    script = [limited('120')];
    const slept: number[] = [];
    const err = await rejection(clientWith(slept, { maxRetryDelayMs: 60_000 }).get('/v1/organizations'));
    assert.equal(err.status, 429);
    assert.deepEqual(slept, []);
  });

  it('does not retry other errors, and describes an answer without an error body', async () => {
    script = [{ status: 500, body: 'oops' }];
    const slept: number[] = [];
    const err = await rejection(clientWith(slept).get('/v1/organizations'));
    assert.deepEqual([err.status, err.error], [500, 'unexpected_response']);
    assert.deepEqual(slept, []);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(null), undefined);
  });
});
