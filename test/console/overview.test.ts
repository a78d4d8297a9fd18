import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { fail500, ok, type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { ConsoleClient, PASSWORD } from './helpers.js';

const ADMIN = 'overview@console.test';

// GET /console/api/overview: exact counts by COUNT queries (docs/console.md).
describe('console overview counts', () => {
  const clock = new ManualClock(Date.parse('2026-04-01T00:00:00Z'));
  let s: TestServer;
  let c: ConsoleClient;
  let api: Api;
  let failing: Receiver;
  let healthy: Receiver;

  const overview = async () => {
    const r = await c.call('GET', '/console/api/overview');
    assert.equal(r.status, 200, r.text);
    return r.json() as Record<string, number>;
  };
  const pump = async () => {
    await s.server.dispatcher.tick();
    await s.server.dispatcher.idle();
  };

  before(async () => {
    // One attempt per delivery: a 500 makes it `failed` at once.
    s = await startTestServer({
      clock,
      config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000, webhookTimeoutMs: 2000, webhookRetrySchedule: '0' },
    });
    failing = await startReceiver(fail500);
    healthy = await startReceiver(ok);
    api = v1(s, s.tenant.platformApiKey);
    assert.equal((await s.server.ctx.admins.grant(s.tenant.tenant.id, ADMIN, PASSWORD)).granted, true);
    c = new ConsoleClient(s);
    await c.signIn(ADMIN);
  });
  after(async () => {
    await failing.close();
    await healthy.close();
    await s.close();
  });

  it('counts a fresh tenant: the administrator and the bootstrap platform key', async () => {
    assert.deepEqual(await overview(), { organizations: 0, users: 1, platform_api_keys: 1, oauth_clients: 0, webhooks: 0, failing_webhooks: 0 });
  });

  it('counts past a page (exact, not 100+), live platform keys only, and only this tenant', async () => {
    for (let i = 0; i < 105; i++) assert.equal((await api('POST', '/users', { email: `u${i}@example.com` })).status, 201);
    const orgs: string[] = [];
    for (let i = 0; i < 3; i++) orgs.push((await api('POST', '/organizations', { name: `O${i}` })).json().id);
    const keep = await api('POST', '/api_keys', { name: 'keep', scopes: ['users:read'] });
    const gone = await api('POST', '/api_keys', { name: 'gone', scopes: ['users:read'] });
    assert.equal((await api('DELETE', `/api_keys/${gone.json().id}`)).status, 204);
    assert.equal(keep.status, 201);
    // Organization keys are not platform keys.
    assert.equal((await api('POST', `/organizations/${orgs[0]}/api_keys`, { name: 'org', scopes: ['members:read'] })).status, 201);
    for (let i = 0; i < 2; i++) {
      const cl = await api('POST', '/clients', { client_name: `C${i}`, grant_types: ['client_credentials'] });
      assert.equal(cl.status, 201, cl.text);
    }
    // Another tenant's rows are not counted.
    const t2 = await s.createTenant(`t2.test:${s.port}`);
    const other = v1(s, t2.platformApiKey, t2.tenant.host);
    assert.equal((await other('POST', '/organizations', { name: 'Elsewhere' })).status, 201);
    assert.equal((await other('POST', '/users', { email: 'elsewhere@example.com' })).status, 201);

    assert.deepEqual(await overview(), { organizations: 3, users: 106, platform_api_keys: 2, oauth_clients: 2, webhooks: 0, failing_webhooks: 0 });
  });

  it('counts webhooks and the failing ones: those whose latest delivery failed', async () => {
    const org = (await api('POST', '/organizations', { name: 'Hooks' })).json().id;
    const bad = await api('POST', `/organizations/${org}/webhooks`, { url: failing.url, events: ['member.added'] });
    const good = await api('POST', `/organizations/${org}/webhooks`, { url: healthy.url, events: ['member.added'] });
    assert.equal(bad.status, 201, bad.text);
    assert.equal(good.status, 201, good.text);
    // No delivery yet: not failing.
    assert.equal((await overview()).failing_webhooks, 0);
    assert.equal((await overview()).webhooks, 2);

    const user = (await api('POST', '/users', { email: 'member@example.com' })).json().id;
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user })).status, 201);
    await pump();
    const deliveries = (await api('GET', `/organizations/${org}/webhooks/${bad.json().endpoint_id}/deliveries`)).json().data;
    assert.equal(deliveries[0].status, 'failed');
    assert.deepEqual(await overview(), { organizations: 4, users: 107, platform_api_keys: 2, oauth_clients: 2, webhooks: 2, failing_webhooks: 1 });

    // The latest delivery decides: once it is delivered again the endpoint is healthy.
    failing.respond = ok;
    const retry = await api('POST', `/organizations/${org}/webhooks/${bad.json().endpoint_id}/deliveries/${deliveries[0].id}/retry`);
    assert.equal(retry.status, 202, retry.text);
    await pump();
    assert.equal((await overview()).failing_webhooks, 0);

    // A newer delivery (a later event: delivery ids sort by creation time) that fails makes it failing again.
    failing.respond = fail500;
    clock.advance(1000);
    const user2 = (await api('POST', '/users', { email: 'member2@example.com' })).json().id;
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user2 })).status, 201);
    await pump();
    assert.equal((await overview()).failing_webhooks, 1);
  });

  it('is for administrators only: 401 without a session, 403 for other users, not in /v1', async () => {
    expectError(await new ConsoleClient(s).call('GET', '/console/api/overview'), 401, 'login_required');
    assert.equal((await api('POST', '/users', { email: 'plain@example.com', password: PASSWORD })).status, 201);
    const plain = new ConsoleClient(s);
    await plain.signIn('plain@example.com');
    expectError(await plain.call('GET', '/console/api/overview'), 403, 'forbidden');
    assert.equal((await api('GET', '/overview')).status, 404);
  });
});
