import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { ManualClock } from '../../src/kernel/clock.js';
import { onPostgres } from '../helpers/db.js';
import { fail500, ok, type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';

const stripe = new Stripe('sk_test_unused');

/** Drives the dispatcher by hand: one claim pass, then wait for its attempts to be recorded. */
async function pump(s: TestServer): Promise<void> {
  await s.server.dispatcher.tick();
  await s.server.dispatcher.idle();
}

async function setup(s: TestServer, url: string, events?: string[]) {
  const api = v1(s, s.tenant.platformApiKey);
  const org = (await api('POST', '/organizations', { name: 'Hooks' })).json().id as string;
  const hook = await api('POST', `/organizations/${org}/webhooks`, { url, ...(events ? { events } : {}) });
  assert.equal(hook.status, 201, hook.text);
  return { api, org, hook: hook.json() as { endpoint_id: string; secret: string; url: string; events: string[] } };
}

async function addMember(api: Api, org: string, email: string): Promise<string> {
  const user = (await api('POST', '/users', { email })).json().id;
  assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user })).status, 201);
  return user;
}

describe('webhook endpoints and signed delivery', () => {
  const clock = new ManualClock(Date.parse('2026-11-22T10:00:00Z'));
  let s: TestServer;
  let rx: Receiver;
  before(async () => {
    s = await startTestServer({ clock, config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000, webhookTimeoutMs: 500 } });
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await s.close();
  });

  it('registers an endpoint: the secret once, encrypted at rest, never listed', async () => {
    const { api, org, hook } = await setup(s, rx.url);
    assert.match(hook.endpoint_id, /^we_/);
    assert.match(hook.secret, /^whsec_/);
    assert.deepEqual(hook.events, ['*']);
    const list = await api('GET', `/organizations/${org}/webhooks`);
    assert.equal(list.json().data[0].endpoint_id, hook.endpoint_id);
    assert.ok(!list.text.includes(hook.secret) && !list.text.includes('secret'), "!list.text.includes(hook.secret) && !list.text.includes('secret')");
    const one = await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}`);
    assert.ok(!one.text.includes('secret'), "!one.text.includes('secret')");
    const row = await s.server.ctx.db.kysely.selectFrom('webhook_endpoints').selectAll().where('id', '=', hook.endpoint_id).executeTakeFirstOrThrow();
    assert.match(row.secret_enc, /^v1\./);
    assert.ok(!row.secret_enc.includes(hook.secret), '!row.secret_enc.includes(hook.secret)');
    expectError(await api('POST', `/organizations/${org}/webhooks`, { url: rx.url, events: ['member.added', 'no.such'] }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${org}/webhooks`, { url: rx.url, events: ['organization.updated'] }), 400, 'invalid_request');
    expectError(await api('POST', `/organizations/${org}/webhooks`, { events: ['member.added'] }), 400, 'invalid_request');
    expectError(await api('POST', '/organizations/org_00000000000000000000000000/webhooks', { url: rx.url }), 404, 'not_found');
    assert.equal((await api('DELETE', `/organizations/${org}/webhooks/${hook.endpoint_id}`)).status, 204);
    expectError(await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}`), 404, 'not_found');
  });

  it('delivers signed envelopes that an independent verifier (stripe) accepts', async () => {
    rx.received.length = 0;
    rx.respond = ok;
    const { api, org, hook } = await setup(s, rx.url);
    const user = await addMember(api, org, 'signed@example.com');
    await api('PATCH', `/organizations/${org}`, { name: 'Renamed' }); // not a webhook type
    await pump(s);
    assert.equal(rx.received.length, 1);
    const got = rx.received[0]!;
    assert.equal(got.headers['content-type'], 'application/json');
    assert.match(String(got.headers['webhook-id']), /^whd_/);
    assert.equal(got.headers['webhook-event'], 'member.added');
    const event = stripe.webhooks.constructEvent(got.body, String(got.headers['webhook-signature']), hook.secret, 300, undefined, clock.now());
    const body = JSON.parse(got.body);
    assert.deepEqual(Object.keys(body).sort(), ['created', 'data', 'id', 'organization_id', 'type']);
    assert.match(body.id, /^evt_/);
    assert.equal(event.id, body.id);
    assert.equal(body.type, 'member.added');
    assert.equal(body.organization_id, org);
    assert.equal(body.created, Math.floor(clock.now() / 1000));
    assert.deepEqual(body.data, { organization_id: org, user_id: user, role: 'member', roles: ['member'] });
    assert.throws(() => stripe.webhooks.constructEvent(got.body, String(got.headers['webhook-signature']), 'whsec_wrong', 300, undefined, clock.now()));
    assert.throws(() => stripe.webhooks.constructEvent(`${got.body} `, String(got.headers['webhook-signature']), hook.secret, 300, undefined, clock.now()));
    const log = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`)).json().data;
    assert.equal(log.length, 1);
    assert.equal(log[0].status, 'delivered');
    assert.equal(log[0].attempts[0].status_code, 200);
  });

  it('delivers only subscribed types, only to the event organization', async () => {
    rx.received.length = 0;
    const a = await setup(s, rx.url, ['member.removed']);
    const b = await setup(s, `${rx.url}?b`);
    await addMember(a.api, a.org, 'sub@example.com');
    await pump(s);
    assert.equal(rx.received.length, 0, 'A only wants member.removed; B belongs to another organization');
    await addMember(b.api, b.org, 'sub-b@example.com');
    await pump(s);
    assert.equal(rx.received.length, 1);
    assert.equal(rx.received[0]!.path, '/hook?b');
  });

  it('retries at 0 / 10 s / 1 min / 5 min / 30 min, then fails; replay sends the same id and bytes', async () => {
    rx.received.length = 0;
    rx.respond = fail500;
    const { api, org, hook } = await setup(s, rx.url);
    await addMember(api, org, 'retry@example.com');
    const start = clock.now();
    const expectedOffsets = [0, 10, 70, 370, 2170];
    for (let i = 0; i < expectedOffsets.length; i++) {
      clock.set(start + expectedOffsets[i]! * 1000 - 1);
      if (i > 0) {
        await pump(s);
        assert.equal(rx.received.length, i, `attempt ${i + 1} not before its time`);
      }
      clock.set(start + expectedOffsets[i]! * 1000);
      await pump(s);
      assert.equal(rx.received.length, i + 1, `attempt ${i + 1} at +${expectedOffsets[i]} s`);
    }
    clock.advance(24 * 3600 * 1000);
    await pump(s);
    assert.equal(rx.received.length, 5, 'no sixth attempt');
    const ids = new Set(rx.received.map((r) => r.headers['webhook-id']));
    assert.equal(ids.size, 1);
    assert.equal(new Set(rx.received.map((r) => r.body)).size, 1);
    const stamps = rx.received.map((r) => /t=(\d+)/.exec(String(r.headers['webhook-signature']))?.[1]);
    assert.equal(new Set(stamps).size, 5, 'a fresh t on every attempt');

    const failed = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries?status=failed`)).json().data;
    assert.equal(failed.length, 1);
    assert.deepEqual(
      failed[0].attempts.map((x: { status_code: number }) => x.status_code),
      [500, 500, 500, 500, 500],
    );

    rx.respond = ok;
    const replay = await api('POST', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries/${failed[0].id}/retry`);
    assert.equal(replay.status, 202, replay.text);
    await pump(s);
    assert.equal(rx.received.length, 6);
    assert.equal(rx.received[5]!.headers['webhook-id'], rx.received[0]!.headers['webhook-id']);
    assert.equal(rx.received[5]!.body, rx.received[0]!.body);
    const done = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`)).json().data[0];
    assert.equal(done.status, 'delivered');
    expectError(await api('POST', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries/whd_00000000000000000000000000/retry`), 404, 'not_found');
  });

  it('counts a redirect as a failure and does not follow it', async () => {
    const target = await startReceiver();
    rx.received.length = 0;
    rx.respond = (_req, res) => res.writeHead(302, { location: target.url }).end();
    const { api, org, hook } = await setup(s, rx.url);
    await addMember(api, org, 'redirect@example.com');
    await pump(s);
    assert.equal(rx.received.length, 1);
    assert.equal(target.connections, 0);
    const log = (await api('GET', `/organizations/${org}/webhooks/${hook.endpoint_id}/deliveries`)).json().data[0];
    assert.equal(log.status, 'pending');
    assert.equal(log.attempts[0].status_code, 302);
    await target.close();
  });

  it('times out a hanging receiver without delaying another endpoint', async () => {
    const hang = await startReceiver((_req, _res) => undefined);
    rx.received.length = 0;
    rx.respond = ok;
    const slow = await setup(s, hang.url);
    const fast = await setup(s, rx.url);
    await addMember(slow.api, slow.org, 'slow@example.com');
    await addMember(fast.api, fast.org, 'fast@example.com');
    const t0 = Date.now();
    await s.server.dispatcher.tick();
    await rx.waitFor(1, 2000);
    assert.ok(Date.now() - t0 < 400, 'the fast endpoint did not wait for the slow one');
    await s.server.dispatcher.idle();
    const log = (await slow.api('GET', `/organizations/${slow.org}/webhooks/${slow.hook.endpoint_id}/deliveries`)).json().data[0];
    assert.match(log.attempts[0].error, /timeout/);
    await hang.close();
  });
});

describe('fair delivery across organizations', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000, webhookTimeoutMs: 1500 } });
  });
  after(() => s.close());

  it('a noisy organization with hanging endpoints takes a bounded share; others are served in the same pass', async () => {
    const hang = await startReceiver((_req, _res) => undefined);
    const quick = await startReceiver(ok);
    const noisy = await setup(s, `${hang.url}?0`);
    for (let i = 1; i < 10; i++) {
      assert.equal((await noisy.api('POST', `/organizations/${noisy.org}/webhooks`, { url: `${hang.url}?${i}` })).status, 201);
    }
    for (let i = 0; i < 3; i++) await addMember(noisy.api, noisy.org, `noisy${i}@example.com`);
    const calm = await setup(s, quick.url);
    await addMember(calm.api, calm.org, 'calm@example.com');
    const t0 = Date.now();
    await s.server.dispatcher.tick();
    await quick.waitFor(1, 1000);
    assert.ok(Date.now() - t0 < 800, 'the calm organization was served in the first pass');
    await hang.waitFor(1, 1000);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(hang.received.length <= 4, `at most 4 attempts of one organization at once (saw ${hang.received.length})`);
    await s.server.dispatcher.idle();
    await hang.close();
    await quick.close();
  });

  it('caps endpoints per organization', async () => {
    const rx = await startReceiver(ok);
    const { api, org } = await setup(s, rx.url);
    for (let i = 1; i < 20; i++) assert.equal((await api('POST', `/organizations/${org}/webhooks`, { url: `${rx.url}?${i}` })).status, 201);
    expectError(await api('POST', `/organizations/${org}/webhooks`, { url: `${rx.url}?20` }), 400, 'invalid_request');
    const events = (await api('GET', `/events?organization_id=${org}&types=webhook_endpoint.created&limit=1`)).json().data;
    assert.deepEqual(Object.keys(events[0].data).sort(), ['endpoint_id', 'events', 'origin']);
    await rx.close();
  });
});

describe('a backlog drains at the pace its endpoint answers', () => {
  let s: TestServer;
  before(async () => {
    // A long interval: any pass after the first one comes from attempts finishing.
    s = await startTestServer({ config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000 } });
  });
  after(() => s.close());

  it('claims again as soon as an attempt finishes, not 2 per endpoint per interval', async () => {
    const rx = await startReceiver(ok);
    try {
      const { api, org } = await setup(s, rx.url);
      for (let i = 0; i < 12; i++) await addMember(api, org, `backlog${i}@example.com`);
      await s.server.dispatcher.tick(); // claims 2 (the per-endpoint cap); the rest follow them
      await rx.waitFor(12, 5000);
      assert.equal(new Set(rx.received.map((r) => String(r.headers['webhook-id']))).size, 12);
      await s.server.dispatcher.idle();
      const pending = await s.server.ctx.db.kysely.selectFrom('webhook_deliveries').select('id').where('status', '!=', 'delivered').execute();
      assert.deepEqual(pending, []);
    } finally {
      await rx.close();
    }
  });
});

describe('the system clock steps forward (a laptop resuming from sleep)', () => {
  it(
    'new deliveries are due at once, not after as long as the machine slept',
    { skip: onPostgres && 'PostgreSQL judges due-ness by the database clock (docs/webhooks.md)' },
    async () => {
      // A wall clock that runs like the system's and then steps (injected: the process's Date.now
      // and its monotonic clock stay as they are, as they do when a laptop resumes).
      let step = 0;
      const wall = { now: () => Date.now() + step };
      const s = await startTestServer({ clock: wall, config: { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000 } });
      const rx = await startReceiver();
      try {
        const { api, org } = await setup(s, rx.url);
        step = 8 * 3600_000; // the wall clock jumped; the monotonic one did not
        await addMember(api, org, 'sleeper@example.com');
        await pump(s);
        assert.deepEqual(
          rx.received.map((r) => r.headers['webhook-event']),
          ['member.added'],
        );
      } finally {
        await rx.close();
        await s.close();
      }
    },
  );
});

describe('egress policy at registration and at delivery', () => {
  let s: TestServer;
  let rx: Receiver;
  let lookups = 0;
  before(async () => {
    rx = await startReceiver();
    s = await startTestServer({
      config: { dispatchIntervalMs: 60_000 },
      // rebind.test resolves to a public address once (registration), then to loopback.
      egressResolver: async (host) => {
        if (host !== 'rebind.test') return [{ address: '93.184.216.34', family: 4 }];
        lookups++;
        return lookups === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
      },
    });
  });
  after(async () => {
    await rx.close();
    await s.close();
  });

  it('refuses every SSRF form with 400 invalid_request', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'SSRF' })).json().id;
    const urls = [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://127.1/x',
      'https://0/x',
      'https://0.0.0.0/x',
      'https://2130706433/x',
      'https://0x7f000001/x',
      'https://017700000001/x',
      'https://[::1]/x',
      'https://[::]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://[::ffff:7f00:1]/x',
      'https://10.0.0.1/x',
      'https://172.16.0.1/x',
      'https://192.168.1.1/x',
      'https://100.64.0.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/x',
      'https://[fe80::1]/x',
      'https://[64:ff9b::a9fe:a9fe]/x',
      'https://[2002:a9fe:a9fe::]/x',
      'https://198.18.0.1/x',
      'https://224.0.0.1/x',
      'https://user:pass@hooks.example.com/x',
      'https://hooks.example.com./x',
      'https://hooks.example.com:22/x',
      'https://hooks.example.com:25/x',
      'https://hooks.example.com:6379/x',
      'file:///etc/passwd',
      'gopher://hooks.example.com/x',
      'data:text/plain,hi',
      'not a url',
    ];
    for (const url of urls) {
      const r = await api('POST', `/organizations/${org}/webhooks`, { url });
      expectError(r, 400, 'invalid_request');
      assert.match(r.json().error_description, /^url: /, url);
    }
  });

  it('refuses a name that resolves to loopback only at delivery, with no connection made', async () => {
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Rebind' })).json().id;
    const hook = await api('POST', `/organizations/${org}/webhooks`, { url: `https://rebind.test:${rx.port}/hook` });
    assert.equal(hook.status, 201, hook.text);
    await addMember(api, org, 'rebind@example.com');
    await pump(s);
    assert.equal(rx.connections, 0);
    const log = (await api('GET', `/organizations/${org}/webhooks/${hook.json().endpoint_id}/deliveries`)).json().data[0];
    assert.match(log.attempts[0].error, /refused/);
  });
});

if (onPostgres) {
  describe('two instances on one PostgreSQL backlog', () => {
    let a: TestServer;
    let b: TestServer;
    let rx: Receiver;
    before(async () => {
      const config = { egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000 };
      a = await startTestServer({ config });
      b = await startTestServer({ config, shareDatabaseWith: a });
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await b.close();
      await a.close();
    });

    it('makes each attempt once', async () => {
      const { api, org } = await setup(a, rx.url);
      for (let i = 0; i < 20; i++) await addMember(api, org, `pg${i}@example.com`);
      for (let round = 0; round < 20 && rx.received.length < 20; round++) {
        await Promise.all([pump(a), pump(b)]);
      }
      assert.equal(rx.received.length, 20);
      assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 20);
    });
  });
}
