/**
 * Operating webhook endpoints (issue 12, item 9): failures are visible (a warn log line and a
 * `webhook_delivery.failed` feed event), deliveries name Keyhall in User-Agent, endpoints can be
 * edited (PATCH), pinged, and a pending delivery retried now.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { ManualClock } from '../../src/kernel/clock.js';
import { fail500, ok, type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

const stripe = new Stripe('sk_test_unused');
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Every log line the server writes, parsed (pino writes one JSON object per line). */
class LogCapture extends Writable {
  readonly lines: Array<Record<string, unknown>> = [];
  raw = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    const text = chunk.toString('utf8');
    this.raw += text;
    for (const line of text.split('\n')) if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  }
}

async function pump(s: TestServer): Promise<void> {
  await s.server.dispatcher.tick();
  await s.server.dispatcher.idle();
}

async function setup(s: TestServer, url: string, events?: string[]) {
  const api = v1(s, s.tenant.platformApiKey);
  const org = (await api('POST', '/organizations', { name: 'Ops' })).json().id as string;
  const hook = await api('POST', `/organizations/${org}/webhooks`, { url, ...(events ? { events } : {}) });
  assert.equal(hook.status, 201, hook.text);
  return { api, org, hook: hook.json() as { endpoint_id: string; secret: string; url: string; events: string[]; updated_at: string } };
}

async function addMember(api: Api, org: string, email: string): Promise<void> {
  const user = (await api('POST', '/users', { email })).json().id;
  assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user })).status, 201);
}

interface FeedEvent {
  data: Record<string, unknown>;
  actor: { type: string; id: string | null };
}
const feed = async (api: Api, org: string, type: string) => (await api('GET', `/events?organization_id=${org}&types=${type}`)).json().data as FeedEvent[];

describe('webhook operations', () => {
  const clock = new ManualClock(Date.parse('2026-11-23T10:00:00Z'));
  const log = new LogCapture();
  let s: TestServer;
  let rx: Receiver;
  before(async () => {
    s = await startTestServer({
      clock,
      logStream: log,
      config: { logLevel: 'info', egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000, webhookTimeoutMs: 500 },
    });
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await s.close();
  });

  it('sends User-Agent: Keyhall-Webhooks/<package version>', async () => {
    rx.received.length = 0;
    rx.respond = ok;
    const { api, org } = await setup(s, rx.url);
    await addMember(api, org, 'ua@example.com');
    await pump(s);
    assert.equal(rx.received.length, 1);
    assert.equal(rx.received[0]!.headers['user-agent'], `Keyhall-Webhooks/${VERSION}`);
  });

  it('a delivery that uses up its attempts logs one warn line and records webhook_delivery.failed (never delivered to webhooks)', async () => {
    rx.received.length = 0;
    rx.respond = fail500;
    const { api, org, hook } = await setup(s, rx.url);
    await addMember(api, org, 'exhaust@example.com');
    for (let i = 0; i < 5; i++) {
      await pump(s);
      clock.advance(3600 * 1000);
    }
    assert.equal(rx.received.length, 5);
    const delivery = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries?status=failed`)).json().data[0];
    assert.ok(delivery, 'the delivery is failed');

    const lines = log.lines.filter((l) => l.msg === 'webhook delivery failed: attempts exhausted');
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line.level, 40, 'warn');
    assert.equal(line.endpoint_id, hook.endpoint_id);
    assert.equal(line.delivery_id, delivery.id);
    assert.equal(line.event_id, delivery.event_id);
    assert.equal(line.attempts, 5);
    assert.equal(line.last_status, 500);
    const body = rx.received[0]!.body;
    assert.ok(!log.raw.includes(hook.secret), 'the secret is never logged');
    assert.ok(!log.raw.includes(body), 'the body is never logged');
    assert.ok(!log.raw.includes(rx.url), 'the url (it may carry a capability) is not logged');

    const events = await feed(api, org, 'webhook_delivery.failed');
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.data, {
      endpoint_id: hook.endpoint_id,
      delivery_id: delivery.id,
      event_id: delivery.event_id,
      event_type: 'member.added',
      attempts: 5,
      last_status_code: 500,
      last_error: 'status 500',
    });
    assert.equal(events[0]!.actor.type, 'system');

    // The failure event is not itself a delivery (a loop to the failing endpoint otherwise).
    const all = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`)).json().data;
    assert.deepEqual(
      all.map((d: { event_type: string }) => d.event_type),
      ['member.added'],
    );
    expectError(await api('POST', `/organizations/${org}/webhooks`, { url: rx.url, events: ['webhook_delivery.failed'] }), 400, 'invalid_request');
  });

  it('PATCH changes url and events, re-checks the url like creation, and {} changes nothing', async () => {
    rx.respond = ok;
    const { api, org, hook } = await setup(s, rx.url);
    const path = `/organizations/${org}/webhooks/${hook.endpoint_id}`;

    // Same refusal as at registration, for every bad url.
    for (const url of ['https://10.0.0.1/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'http://hooks.example.com/x', 'not a url']) {
      const created = await api('POST', `/organizations/${org}/webhooks`, { url });
      const patched = await api('PATCH', path, { url });
      expectError(patched, 400, 'invalid_request');
      assert.equal(patched.json().error_description, created.json().error_description, url);
    }
    expectError(await api('PATCH', path, { events: ['no.such'] }), 400, 'invalid_request');
    expectError(await api('PATCH', path, { events: ['organization.updated'] }), 400, 'invalid_request');
    expectError(await api('PATCH', path, { events: [] }), 400, 'invalid_request');
    expectError(await api('PATCH', path, { secret: 'whsec_x' }), 400, 'invalid_request');
    expectError(await api('PATCH', `/organizations/${org}/webhooks/we_00000000000000000000000000`, { events: ['member.added'] }), 404, 'not_found');

    clock.advance(1000);
    const empty = await api('PATCH', path, {});
    assert.equal(empty.status, 200, empty.text);
    assert.equal(empty.json().updated_at, hook.updated_at, '{} does not bump updated_at');
    const same = await api('PATCH', path, { url: hook.url, events: ['*'] });
    assert.equal(same.json().updated_at, hook.updated_at, 'the values it has already: no change');
    assert.equal((await feed(api, org, 'webhook_endpoint.updated')).length, 0, 'no event for no change');

    const changed = await api('PATCH', path, { url: `${rx.url}?v=2`, events: ['member.removed'] });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.json().url, `${rx.url}?v=2`);
    assert.deepEqual(changed.json().events, ['member.removed']);
    assert.equal(changed.json().updated_at, new Date(clock.now()).toISOString());
    assert.equal(changed.json().created_at, hook.updated_at);
    const events = await feed(api, org, 'webhook_endpoint.updated');
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.data, {
      endpoint_id: hook.endpoint_id,
      changed: ['url', 'events'],
      origin: new URL(rx.url).origin,
      events: ['member.removed'],
    });

    // The new subscription is what counts from now on.
    rx.received.length = 0;
    await addMember(api, org, 'patched@example.com');
    await pump(s);
    assert.equal(rx.received.length, 0, 'member.added is no longer subscribed');

    // webhooks:read is not enough.
    const reader = (await api('POST', '/api_keys', { name: 'reader', scopes: ['webhooks:read'] })).json().key;
    expectError(await v1(s, reader)('PATCH', path, { events: ['member.added'] }), 403, 'insufficient_scope');
    expectError(await v1(s, reader)('POST', `${path}/ping`), 403, 'insufficient_scope');
  });

  it('ping queues a signed `ping` event to that endpoint only', async () => {
    rx.received.length = 0;
    rx.respond = ok;
    const a = await setup(s, `${rx.url}?a`);
    const b = await a.api('POST', `/organizations/${a.org}/webhooks`, { url: `${rx.url}?b` });
    assert.equal(b.status, 201);
    const r = await a.api('POST', `/organizations/${a.org}/webhooks/${a.hook.endpoint_id}/ping`);
    assert.equal(r.status, 202, r.text);
    assert.match(r.json().delivery_id, /^whd_/);
    assert.match(r.json().event_id, /^evt_/);
    assert.equal(r.json().status, 'pending');
    await pump(s);
    assert.equal(rx.received.length, 1, 'only the pinged endpoint');
    const got = rx.received[0]!;
    assert.equal(got.path, '/hook?a');
    assert.equal(got.headers['webhook-event'], 'ping');
    assert.equal(got.headers['webhook-id'], r.json().delivery_id);
    const event = stripe.webhooks.constructEvent(got.body, String(got.headers['webhook-signature']), a.hook.secret, 300, undefined, clock.now());
    assert.equal(event.type, 'ping');
    assert.deepEqual(JSON.parse(got.body), {
      id: r.json().event_id,
      type: 'ping',
      created: Math.floor(clock.now() / 1000),
      organization_id: a.org,
      data: { endpoint_id: a.hook.endpoint_id },
    });
    const logged = (await a.api('GET', `/organizations/${a.org}/webhooks/${a.hook.endpoint_id}/deliveries`)).json().data;
    assert.equal(logged.length, 1);
    assert.equal(logged[0].event_type, 'ping');
    assert.equal(logged[0].status, 'delivered');
    expectError(await a.api('POST', `/organizations/${a.org}/webhooks/we_00000000000000000000000000/ping`), 404, 'not_found');
  });

  it('retry now makes a pending delivery due at once', async () => {
    rx.received.length = 0;
    rx.respond = fail500;
    const { api, org, hook } = await setup(s, rx.url);
    await addMember(api, org, 'retry-now@example.com');
    await pump(s);
    assert.equal(rx.received.length, 1);
    const pending = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`)).json().data[0];
    assert.equal(pending.status, 'pending');
    assert.equal(pending.next_attempt_at, new Date(clock.now() + 10_000).toISOString());
    await pump(s);
    assert.equal(rx.received.length, 1, 'not due yet');

    rx.respond = ok;
    const retried = await api('POST', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries/${pending.id}/retry`);
    assert.equal(retried.status, 202, retried.text);
    assert.deepEqual(retried.json(), { id: pending.id, status: 'pending' });
    await pump(s); // the clock has not moved
    assert.equal(rx.received.length, 2, 'attempted at once');
    assert.equal(rx.received[1]!.headers['webhook-id'], rx.received[0]!.headers['webhook-id']);
    const done = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`)).json().data[0];
    assert.equal(done.status, 'delivered');
    assert.equal(done.attempts.length, 2);

    expectError(await api('POST', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries/whd_00000000000000000000000000/retry`), 404, 'not_found');
  });

  it('a delivered delivery is resent on request: one new attempt, same webhook-id and body, recorded in its attempts', async () => {
    rx.received.length = 0;
    rx.respond = ok;
    const { api, org, hook } = await setup(s, rx.url);
    await addMember(api, org, 'resend@example.com');
    await pump(s);
    assert.equal(rx.received.length, 1);
    const path = `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`;
    const d = (await api('GET', path)).json().data[0];
    assert.equal(d.status, 'delivered');

    clock.advance(60_000);
    const resent = await api('POST', `${path}/${d.id}/retry`);
    assert.equal(resent.status, 202, resent.text);
    assert.deepEqual(resent.json(), { id: d.id, status: 'pending' });
    await pump(s);
    assert.equal(rx.received.length, 2, 'sent again');
    const [first, second] = rx.received as [(typeof rx.received)[0], (typeof rx.received)[0]];
    assert.equal(second.headers['webhook-id'], first.headers['webhook-id']);
    assert.equal(second.headers['webhook-event'], 'member.added');
    assert.equal(second.body, first.body, 'the same bytes');
    assert.notEqual(second.headers['webhook-signature'], first.headers['webhook-signature'], 'signed afresh');
    const event = stripe.webhooks.constructEvent(second.body, String(second.headers['webhook-signature']), hook.secret, 300, undefined, clock.now());
    assert.equal(event.type as string, 'member.added');
    const after = (await api('GET', path)).json().data[0];
    assert.equal(after.status, 'delivered');
    assert.deepEqual(
      after.attempts.map((a: { attempt: number; at: string; status_code: number }) => [a.attempt, a.at, a.status_code]),
      [
        [1, new Date(clock.now() - 60_000).toISOString(), 200],
        [2, new Date(clock.now()).toISOString(), 200],
      ],
    );

    // A resend the receiver refuses is one attempt, not a new schedule: the delivery is failed.
    rx.respond = fail500;
    assert.equal((await api('POST', `${path}/${d.id}/retry`)).status, 202);
    await pump(s);
    clock.advance(3_600_000);
    await pump(s);
    assert.equal(rx.received.length, 3, 'one attempt');
    const refused = (await api('GET', path)).json().data[0];
    assert.equal(refused.status, 'failed');
    assert.deepEqual(
      refused.attempts.map((a: { status_code: number }) => a.status_code),
      [200, 200, 500],
    );
  });

  it('retry now never lets a delivery be attempted twice at once', async () => {
    rx.received.length = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    rx.respond = (_req, res) => void held.then(() => res.writeHead(200).end());
    const { api, org, hook } = await setup(s, rx.url);
    await addMember(api, org, 'inflight@example.com');
    await s.server.dispatcher.tick(); // claimed and in flight
    await rx.waitFor(1);
    const d = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`)).json().data[0];
    assert.equal(d.status, 'delivering');
    const results = await Promise.all([1, 2, 3].map(() => api('POST', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries/${d.id}/retry`)));
    for (const r of results) expectError(r, 409, 'conflict');
    await s.server.dispatcher.tick();
    release();
    await s.server.dispatcher.idle();
    assert.equal(rx.received.length, 1, 'one attempt');
  });
});
