import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createEgressAgent } from '../../src/egress/agent.js';
import { asResponse, egressFetch, EgressFetchError, type EgressFetchFailure } from '../../src/egress/fetch.js';
import { defaultEgressPolicy, parseEgressAllowlist } from '../../src/egress/policy.js';

describe('egressFetch (the one bounded outbound fetch)', () => {
  let server: http.Server;
  let base: string;
  let requests = 0;
  const hanging: http.ServerResponse[] = [];
  const policy = parseEgressAllowlist('127.0.0.1/32');
  const agent = createEgressAgent(policy);

  before(async () => {
    server = http.createServer((req, res) => {
      requests++;
      if (req.url === '/small') res.writeHead(200, { 'content-type': 'application/json', 'x-two': ['a', 'b'] }).end('{"ok":true}');
      else if (req.url === '/big') res.writeHead(200).end('x'.repeat(2048));
      else if (req.url === '/exact') res.writeHead(200).end('y'.repeat(1024));
      else if (req.url === '/redirect') res.writeHead(302, { location: '/small' }).end();
      else if (req.url === '/missing') res.writeHead(404).end('nope');
      else if (req.url === '/echo') req.pipe(res.writeHead(201, { 'x-method': req.method ?? '' }));
      else if (req.url === '/slow-body') {
        res.writeHead(200).write('partial');
        hanging.push(res);
      } else hanging.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const limits = { maxBytes: 1024, timeoutMs: 300 };
  async function failsWith(kind: EgressFetchFailure, promise: Promise<unknown>, message: RegExp) {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof EgressFetchError, String(err));
      assert.equal(err.kind, kind);
      assert.match(err.message, message);
      return true;
    });
  }

  it('reads a whole answer within the limits, headers included', async () => {
    const res = await egressFetch(agent, `${base}/small`, limits);
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), '{"ok":true}');
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('x-two'), 'a, b');
    const whatwg = asResponse(res);
    assert.deepEqual(await whatwg.json(), { ok: true });
  });

  it('sends a method, headers and a body, and returns a non-2xx answer as it is', async () => {
    const res = await egressFetch(agent, `${base}/echo`, { ...limits, method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-method'), 'POST');
    assert.equal(res.body.toString(), 'hello');
    assert.equal((await egressFetch(agent, `${base}/missing`, limits)).status, 404);
  });

  it('reads up to maxBytes and refuses one byte more', async () => {
    assert.equal((await egressFetch(agent, `${base}/exact`, limits)).body.length, 1024);
    await failsWith('too_large', egressFetch(agent, `${base}/big`, limits), /exceeds 1024 bytes/);
  });

  it('gives up after timeoutMs, whether the headers or the body are late', async () => {
    const started = performance.now();
    await failsWith('timeout', egressFetch(agent, `${base}/never`, limits), /no answer within 300 ms/);
    await failsWith('timeout', egressFetch(agent, `${base}/slow-body`, limits), /no answer within 300 ms/);
    assert.ok(performance.now() - started < 5_000);
  });

  it('refuses a redirect instead of following it', async () => {
    const before = requests;
    await failsWith('redirect', egressFetch(agent, `${base}/redirect`, limits), /answered 302, a redirect, which is not followed/);
    assert.equal(requests, before + 1, 'the Location was not fetched');
  });

  it('refuses what the egress policy refuses, without connecting', async () => {
    const before = requests;
    await failsWith(
      'refused',
      egressFetch(agent, `${base}/small`, { ...limits, policy: defaultEgressPolicy }),
      /egress policy \(destination address is not allowed\)/,
    );
    await failsWith('refused', egressFetch(agent, 'ftp://127.0.0.1/x', limits), /egress policy/);
    const strict = createEgressAgent(defaultEgressPolicy, { resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      await failsWith('refused', egressFetch(strict, `https://loopback.example:${new URL(base).port}/small`, limits), /egress policy/);
    } finally {
      await strict.close();
    }
    assert.equal(requests, before);
  });

  it('reports a connection failure as a network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await failsWith('network', egressFetch(agent, `http://127.0.0.1:${port}/`, limits), /ECONNREFUSED|connect/);
  });
});
