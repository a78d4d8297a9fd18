import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PASSWORD, type SigninTestServer, startSigninServer } from './helpers.js';

/** Security review 2, finding 4: dot segments cannot turn return_to into a network-path reference. */
describe('return_to after login stays on this origin after normalisation', () => {
  let s: SigninTestServer;
  let email: string;
  before(async () => {
    s = await startSigninServer({ config: { loginMaxFailuresPerAccount: 1000, loginMaxFailuresPerIp: 1000 } });
    email = (await s.createUser('ada@example.com')).email;
  });
  after(() => s.close());

  const dangerous = [
    '/.//evil.example/x',
    '/..//evil.example/x',
    '/%2e%2e//evil.example/x',
    '/%2E//evil.example/x',
    '/a/..//evil.example/x',
    '/./\\evil.example',
  ];

  it('falls back to /sessions for return_to values that normalise to //host (through the page and posted directly)', async () => {
    for (const value of dangerous) {
      const b = s.browser();
      const page = await b.get(`/login?return_to=${encodeURIComponent(value)}`);
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /evil\.example/, value);
      const viaPage = await b.submit(page, { email, password: PASSWORD });
      assert.equal(viaPage.headers.location, '/sessions', value);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
      const direct = await b.post('/login', { csrf_token: csrf, email, password: PASSWORD, return_to: value });
      assert.equal(direct.status, 303);
      assert.equal(direct.headers.location, '/sessions', value);
    }
  });

  it('still follows ordinary paths, normalised', async () => {
    for (const [value, expected] of [
      ['/sessions', '/sessions'],
      ['/a/../sessions', '/sessions'],
      ['/login?x=1', '/login?x=1'],
    ] as const) {
      const b = s.browser();
      const page = await b.get(`/login?return_to=${encodeURIComponent(value)}`);
      assert.equal((await b.submit(page, { email, password: PASSWORD })).headers.location, expected, value);
    }
  });
});
