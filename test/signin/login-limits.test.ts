import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PASSWORD, type SigninTestServer, signIn, startSigninServer } from './helpers.js';

/** Security review 2, finding 1: the failed-login limits hold against parallel requests. */
describe('failed-login limits under concurrency', () => {
  let s: SigninTestServer;
  before(async () => {
    s = await startSigninServer({ config: { loginMaxFailuresPerAccount: 5, loginMaxFailuresPerIp: 1000, loginFailureWindowSeconds: 600 } });
  });
  after(() => s.close());

  const statuses = (rs: Array<{ status: number }>) => {
    const counts: Record<number, number> = {};
    for (const r of rs) counts[r.status] = (counts[r.status] ?? 0) + 1;
    return counts;
  };

  it('gives at most the account limit of password checks to parallel wrong attempts; the rest get 429 + Retry-After', async () => {
    const user = await s.createUser('race@example.com');
    const b = s.browser();
    const page = await b.get('/login');
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => b.submit(page, { email: user.email, password: `wrong${i}` })));
    const counts = statuses(rs);
    assert.ok((counts[401] ?? 0) <= 5, `at most 5 checks, got ${JSON.stringify(counts)}`);
    assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 40, JSON.stringify(counts));
    for (const r of rs.filter((x) => x.status === 429)) assert.ok(Number(r.headers['retry-after']) >= 1);
    // Still limited: even the right password gets no check.
    assert.equal((await b.submit(page, { email: user.email, password: PASSWORD })).status, 429);
  });

  it('a successful login does not use up the IP limit, and clears the account counter', async () => {
    const t = await startSigninServer({ config: { loginMaxFailuresPerAccount: 2, loginMaxFailuresPerIp: 2, loginFailureWindowSeconds: 600 } });
    try {
      const user = await t.createUser('ok@example.com');
      for (let i = 0; i < 4; i++) assert.equal((await signIn(t.browser(), '/login', user.email)).status, 303);
      const b = t.browser();
      const page = await b.get('/login');
      assert.equal((await b.submit(page, { email: user.email, password: 'wrong' })).status, 401);
      assert.equal((await b.submit(page, { email: user.email, password: PASSWORD })).status, 303);
      assert.equal((await b.submit(page, { email: 'other@example.com', password: 'wrong' })).status, 401);
      assert.equal((await b.submit(page, { email: 'third@example.com', password: 'wrong' })).status, 429);
    } finally {
      await t.close();
    }
  });
});
