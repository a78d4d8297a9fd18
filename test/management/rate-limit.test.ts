import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectError, v1 } from '../helpers/v1.js';

describe('/v1 rate limit per API key', () => {
  const clock = new ManualClock();
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ clock, config: { apiRateLimit: 5 } });
  });
  after(() => s.close());

  it('answers 429 rate_limited with Retry-After past the limit, per key, until the window ends', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const results = await Promise.all(Array.from({ length: 8 }, () => api('GET', '/organizations')));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 429, 429, 429]);
    const limited = results.find((r) => r.status === 429)!;
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);

    // Another key has its own budget.
    clock.advance(60_000);
    const other = (await api('POST', '/api_keys', { name: 'other', scopes: ['organizations:read'] })).json().key;
    for (let i = 0; i < 4; i++) await api('GET', '/organizations');
    expectError(await api('GET', '/organizations'), 429, 'rate_limited');
    assert.equal((await v1(s, other)('GET', '/organizations')).status, 200);

    clock.advance(60_000);
    assert.equal((await api('GET', '/organizations')).status, 200);
  });

  it('does not count unauthenticated requests against a key', async () => {
    const r = await s.request({ path: '/v1/organizations' });
    expectError(r, 401, 'invalid_token');
  });
});
