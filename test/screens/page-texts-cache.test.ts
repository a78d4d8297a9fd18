/**
 * The page texts cache (src/management/branding/service.ts, docs/performance.md): two instances
 * on one database. A change made through one instance shows on its own pages at once; the other
 * instance keeps its cached texts until KEYHALL_CACHE_TTL_MS has passed on its clock, then shows
 * the change. Time is a manual clock: nothing sleeps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { ManualClock } from '../../src/kernel/clock.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { request } from '../helpers/http.js';
import { type Api, v1 } from '../helpers/v1.js';
import { decodeEntities, type SigninTestServer, startSigninServer } from '../signin/helpers.js';

const TTL_MS = 5_000;
const h1 = (text: string) => decodeEntities(/<h1>([\s\S]*?)<\/h1>/.exec(text)?.[1] ?? '');

describe('page texts cached per instance, two instances on one database', () => {
  const clockA = new ManualClock();
  const clockB = new ManualClock(clockA.now());
  let a: SigninTestServer;
  let b: RunningServer;
  let api: Api;
  before(async () => {
    a = await startSigninServer({ clock: clockA, config: { cacheTtlMs: TTL_MS } });
    b = await startServer(
      loadConfig({ ...a.env, KEYHALL_CACHE_TTL_MS: String(TTL_MS) }, { port: 0, host: '127.0.0.1', bootstrap: 'false', logLevel: 'silent' }),
      {
        clock: clockB,
      },
    );
    api = v1(a, a.tenant.platformApiKey);
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  const loginAt = async (port: number) => {
    const page = await request(port, { host: a.tenant.tenant.host, path: '/login', headers: { 'accept-language': 'en' } });
    assert.equal(page.status, 200);
    return h1(page.text);
  };

  it('shows a change on the instance that made it at once, on the other within the TTL', async () => {
    assert.equal(await loginAt(a.port), 'Sign in');
    assert.equal(await loginAt(b.port), 'Sign in'); // B caches the tenant's (empty) texts now

    assert.equal((await api('PUT', '/branding/texts', { en: { 'login.heading': 'Welcome to Acme' } })).status, 200);
    assert.equal(await loginAt(a.port), 'Welcome to Acme', 'the writing instance drops its entry');
    assert.equal(await loginAt(b.port), 'Sign in', 'the other instance still serves its cached texts within the TTL');

    clockB.advance(TTL_MS - 1);
    assert.equal(await loginAt(b.port), 'Sign in', 'one millisecond before the TTL runs out');
    clockB.advance(1);
    assert.equal(await loginAt(b.port), 'Welcome to Acme', 'read again once the TTL has passed');

    // The default locale is cached with the texts and dropped the same way.
    assert.equal((await api('PUT', '/branding/locale', { default_locale: 'de' })).status, 200);
    const de = await request(a.port, { host: a.tenant.tenant.host, path: '/login' });
    assert.equal(de.headers['content-language'], 'de');
    const stale = await request(b.port, { host: a.tenant.tenant.host, path: '/login' });
    assert.equal(stale.headers['content-language'], 'en');
    clockB.advance(TTL_MS);
    const fresh = await request(b.port, { host: a.tenant.tenant.host, path: '/login' });
    assert.equal(fresh.headers['content-language'], 'de');

    // Clearing the overrides is seen at once where it was made.
    assert.equal((await api('PUT', '/branding/texts', {})).status, 200);
    assert.equal(await loginAt(a.port), 'Sign in');
  });
});
