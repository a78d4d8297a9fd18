import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { RemoteJwksCache } from '../../src/http/oauth/remote-jwks.js';
import { createEgressAgent } from '../../src/egress/agent.js';
import { parseEgressAllowlist } from '../../src/egress/policy.js';

describe('jwks_uri cache', () => {
  let server: http.Server;
  let base: string;
  let status = 200;
  let fetches = 0;
  const policy = parseEgressAllowlist('127.0.0.1/32');
  const agent = createEgressAgent(policy);
  let now = 0;
  before(async () => {
    server = http.createServer((_req, res) => {
      fetches++;
      res.writeHead(status, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          keys: [
            { kty: 'OKP', crv: 'Ed25519', x: 'AA', kid: 'a' },
            { kty: 'OKP', crv: 'Ed25519', x: 'AA', d: 'secret', kid: 'private' },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });
  const cache = () => new RemoteJwksCache(agent, policy, () => now, { ttlMs: 60_000, minRefreshMs: 5_000 });

  it('caches a set, drops private keys, and refreshes on demand at most once per interval', async () => {
    const c = cache();
    fetches = 0;
    const set = await c.keys(`${base}/a`, { refresh: false });
    assert.deepEqual(
      set.keys.map((k) => k.kid),
      ['a'],
    );
    await c.keys(`${base}/a`, { refresh: false });
    await c.keys(`${base}/a`, { refresh: true });
    assert.equal(fetches, 1);
    now += 5_000;
    await c.keys(`${base}/a`, { refresh: true });
    assert.equal(fetches, 2);
    now += 60_000;
    await c.keys(`${base}/a`, { refresh: false });
    assert.equal(fetches, 3);
  });

  it('remembers a failure for the refresh interval', async () => {
    const c = cache();
    status = 500;
    fetches = 0;
    await assert.rejects(c.keys(`${base}/b`, { refresh: false }));
    await assert.rejects(c.keys(`${base}/b`, { refresh: false }));
    assert.equal(fetches, 1);
    now += 5_000;
    status = 200;
    assert.equal((await c.keys(`${base}/b`, { refresh: false })).keys.length, 1);
    assert.equal(fetches, 2);
  });

  it('refuses a destination outside the egress policy without connecting', async () => {
    const c = new RemoteJwksCache(agent, parseEgressAllowlist(undefined), () => now);
    fetches = 0;
    await assert.rejects(c.keys(`${base}/c`, { refresh: false }));
    assert.equal(fetches, 0);
  });
});
