import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ManualClock, systemClock, type Clock } from '../../src/kernel/clock.js';
import { attemptDelivery, MAX_LOGGED_RESPONSE_BYTES, type DeliveryAttempt, type DeliveryResult } from '../../src/webhooks/deliver.js';
import { createEgressAgent, type EgressAgent } from '../../src/egress/agent.js';
import { defaultEgressPolicy, parseEgressAllowlist, type EgressResolver } from '../../src/egress/policy.js';
import { checkEgressUrlResolved } from '../../src/egress/url.js';
import { newWebhookSecret, verifyWebhookSignature, webhookHeaders } from '../../src/webhooks/signer.js';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface Receiver {
  url: string;
  port: number;
  connections: number;
  received: Received[];
  close(): Promise<void>;
}

/** A real receiver on 127.0.0.1 that records each request and counts TCP connections. */
async function startReceiver(respond: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Receiver> {
  const r = { connections: 0, received: [] as Received[] } as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      respond(req, res);
    });
  });
  server.on('connection', () => r.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

const allowLoopback = parseEgressAllowlist('127.0.0.1/32');
const envelope = JSON.stringify({
  id: 'evt_01jabcdefghjkmnpqrstvwxyz0',
  type: 'member.added',
  created: 1_700_000_000,
  organization_id: 'org_01jabc',
  data: { user_id: 'user_1', name: 'Zoë ✓', note: 'bytes, not re-serialised' },
});

function attempt(agent: EgressAgent, url: string, extra: Partial<DeliveryAttempt> = {}): Promise<DeliveryResult> {
  return attemptDelivery({
    url,
    body: envelope,
    headers: { 'webhook-id': 'whd_1', 'webhook-event': 'member.added' },
    timeoutMs: 2000,
    agent,
    clock: systemClock,
    ...extra,
  });
}

describe('attemptDelivery', () => {
  let agent: EgressAgent;
  let strict: EgressAgent;
  let ok: Receiver;
  let fail: Receiver;
  let target: Receiver;
  let redirect: Receiver;
  let hang: Receiver;
  let trickle: Receiver;
  let big: Receiver;

  before(async () => {
    agent = createEgressAgent(allowLoopback, { connectTimeoutMs: 2000 });
    strict = createEgressAgent(defaultEgressPolicy, { connectTimeoutMs: 2000 });
    ok = await startReceiver((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    fail = await startReceiver((_req, res) => res.writeHead(500).end('boom'));
    target = await startReceiver((_req, res) => res.writeHead(200).end('you should not be here'));
    redirect = await startReceiver((_req, res) => res.writeHead(302, { location: target.url }).end());
    hang = await startReceiver(() => {});
    trickle = await startReceiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('t');
      const timer = setInterval(() => res.write('.'), 40);
      res.on('close', () => clearInterval(timer));
    });
    big = await startReceiver((_req, res) => res.writeHead(200).end('x'.repeat(256 * 1024)));
  });

  after(async () => {
    await Promise.all([agent.destroy(), strict.destroy()]);
    await Promise.all([ok, fail, target, redirect, hang, trickle, big].map((r) => r.close()));
  });

  it('a 2xx is success; sends exact bytes, the given headers and content-type application/json', async () => {
    const secret = newWebhookSecret();
    const headers = {
      ...webhookHeaders({ deliveryId: 'whd_abc', eventType: 'member.added', secret, body: envelope, nowSeconds: 1_700_000_000 }),
      'Content-Type': 'text/plain',
    };
    const r = await attempt(agent, ok.url, { headers });
    assert.equal(r.ok, true);
    assert.equal(r.status, 200);
    assert.equal(r.error, undefined);
    assert.equal(r.responseBody, 'thanks');
    assert.ok(r.durationMs >= 0, `durationMs ${r.durationMs}`);
    const got = ok.received.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/hook');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['webhook-id'], 'whd_abc');
    assert.equal(got.headers['webhook-event'], 'member.added');
    assert.equal(got.headers['content-length'], String(Buffer.byteLength(envelope)));
    assert.deepEqual(got.body, Buffer.from(envelope, 'utf8'));
    // The receiver verifies on the raw bytes it got.
    assert.equal(verifyWebhookSignature(secret, String(got.headers['webhook-signature']), got.body, 1_700_000_010).ok, true);
  });

  it('a retry carries the same webhook-id and bytes with a fresh t', async () => {
    const secret = newWebhookSecret();
    for (const t of [1_700_000_000, 1_700_000_010]) {
      const headers = webhookHeaders({ deliveryId: 'whd_retry', eventType: 'member.added', secret, body: envelope, nowSeconds: t });
      assert.equal((await attempt(agent, ok.url, { headers })).ok, true);
    }
    const [first, second] = ok.received.slice(-2) as [Received, Received];
    assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
    assert.deepEqual(first.body, second.body);
    assert.notEqual(first.headers['webhook-signature'], second.headers['webhook-signature']);
    assert.match(String(second.headers['webhook-signature']), /^t=1700000010,v1=[0-9a-f]{64}$/);
  });

  it('any 2xx is success (204)', async () => {
    const noContent = await startReceiver((_req, res) => res.writeHead(204).end());
    try {
      assert.deepEqual({ ...(await attempt(agent, noContent.url)), durationMs: 0 }, { ok: true, status: 204, responseBody: '', durationMs: 0 });
    } finally {
      await noContent.close();
    }
  });

  it('a 500 is a failure, with the status and body kept for the log', async () => {
    const r = await attempt(agent, fail.url);
    assert.equal(r.ok, false);
    assert.equal(r.status, 500);
    assert.equal(r.error, 'status 500');
    assert.equal(r.responseBody, 'boom');
  });

  it('a 302 is a failure and is not followed: the redirect target sees no connection', async () => {
    const r = await attempt(agent, redirect.url);
    assert.equal(r.ok, false);
    assert.equal(r.status, 302);
    assert.equal(r.error, 'redirect not followed');
    assert.equal(redirect.received.length, 1);
    assert.equal(target.connections, 0);
    assert.equal(target.received.length, 0);
  });

  it('a hanging receiver fails at the timeout', async () => {
    const started = Date.now();
    const r = await attempt(agent, hang.url, { timeoutMs: 300 });
    const elapsed = Date.now() - started;
    assert.deepEqual({ ok: r.ok, error: r.error, status: r.status }, { ok: false, error: 'timeout', status: undefined });
    assert.ok(elapsed >= 280 && elapsed < 1500, `took ${elapsed} ms`);
    assert.ok(r.durationMs >= 280, `durationMs ${r.durationMs}`);
    assert.equal(hang.received.length, 1, 'the request did arrive');
  });

  it('a trickling body is cut by the total timeout (a 200 that never finishes is a failure)', async () => {
    const started = Date.now();
    const r = await attempt(agent, trickle.url, { timeoutMs: 300 });
    const elapsed = Date.now() - started;
    assert.equal(r.ok, false);
    assert.equal(r.status, 200);
    assert.equal(r.error, 'timeout');
    assert.ok(elapsed < 1500, `took ${elapsed} ms`);
    assert.match(r.responseBody ?? '', /^t\.*$/);
  });

  it('reads at most 4 KiB of a large answer, then stops', async () => {
    const r = await attempt(agent, big.url);
    assert.equal(r.ok, true);
    assert.equal(r.responseBody?.length, MAX_LOGGED_RESPONSE_BYTES);
    const small = await attempt(agent, big.url, { maxResponseBytes: 10 });
    assert.equal(small.responseBody, 'x'.repeat(10));
  });

  it('a refused connection (nothing listening) is a failure', async () => {
    const closed = await startReceiver(() => {});
    await closed.close();
    const r = await attempt(agent, closed.url);
    assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error: 'connection failed: ECONNREFUSED' });
  });

  it('without the allowlist, loopback is refused by policy and the receiver sees no TCP connection', async () => {
    const before = ok.connections;
    const received = ok.received.length;
    for (const url of [ok.url, `http://127.1:${ok.port}/hook`, `http://[::ffff:127.0.0.1]:${ok.port}/hook`, `https://127.0.0.1:${ok.port}/hook`]) {
      const r = await attempt(strict, url);
      assert.deepEqual(
        { ok: r.ok, error: r.error, status: r.status },
        { ok: false, error: 'refused: destination address is not allowed', status: undefined },
        url,
      );
    }
    assert.equal(ok.connections, before);
    assert.equal(ok.received.length, received);
  });

  it('every SSRF form of SECURITY-CHECKLIST §13 fails at delivery, with no connection to the receiver', async () => {
    const before = ok.connections;
    const p = ok.port;
    const literals = [
      `127.1:${p}`,
      `0:${p}`,
      `0.0.0.0:${p}`,
      `2130706433:${p}`,
      `0x7f000001:${p}`,
      `017700000001:${p}`,
      `[::1]:${p}`,
      `[::]:${p}`,
      `[::ffff:127.0.0.1]:${p}`,
      `[::ffff:7f00:1]:${p}`,
      `10.0.0.1:${p}`,
      `172.16.0.1:${p}`,
      `192.168.0.1:${p}`,
      `100.64.0.1:${p}`,
      `169.254.169.254:${p}`,
      `[fd00:ec2::254]:${p}`,
      `[fe80::1]:${p}`,
      `[fc00::1]:${p}`,
      `[64:ff9b::a9fe:a9fe]:${p}`,
      `[2002:a9fe:a9fe::]:${p}`,
      `198.18.0.1:${p}`,
      `224.0.0.1:${p}`,
    ];
    for (const host of literals) {
      for (const scheme of ['https', 'http']) {
        const r = await attempt(strict, `${scheme}://${host}/hook`);
        assert.equal(r.ok, false, host);
        assert.match(r.error ?? '', /^refused: /, `${scheme}://${host}`);
      }
    }
    // Names resolving to each forbidden address at delivery time.
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', '169.254.169.254', 'fd00:ec2::254', '64:ff9b::7f00:1']) {
      const named = createEgressAgent(defaultEgressPolicy, { resolver: async () => [{ address, family: address.includes(':') ? 6 : 4 }] });
      try {
        const r = await attempt(named, `https://127.0.0.1.nip.io:${p}/hook`);
        assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error: 'refused: destination address is not allowed' }, address);
      } finally {
        await named.destroy();
      }
    }
    // Ports and schemes, for a name resolving to a public address (refused before connecting).
    const publicName = createEgressAgent(defaultEgressPolicy, { resolver: async () => [{ address: '93.184.215.14', family: 4 }] });
    try {
      for (const [url, error] of [
        ['https://hooks.example.com:22/', 'refused: port is not allowed'],
        ['https://hooks.example.com:25/', 'refused: port is not allowed'],
        ['https://hooks.example.com:6379/', 'refused: port is not allowed'],
        ['http://hooks.example.com/', 'refused: only https URLs are allowed'],
        ['https://hooks.example.com./', 'refused: host must not end with a dot'],
        ['https://user@hooks.example.com/', 'refused: must not contain credentials'],
        ['data:application/json,{}', 'refused: only https URLs are allowed'],
      ] as const) {
        const r = await attempt(publicName, url);
        assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error }, url);
      }
    } finally {
      await publicName.destroy();
    }
    assert.equal(ok.connections, before);
  });

  it('a name that resolves to 127.0.0.1 only at delivery (DNS rebinding) is refused with no connection', async () => {
    let lookups = 0;
    const resolver: EgressResolver = async () => {
      lookups++;
      return [{ address: lookups === 1 ? '93.184.215.14' : '127.0.0.1', family: 4 }];
    };
    const url = `https://rebind.example.com:${ok.port}/hook`;
    const registration = await checkEgressUrlResolved(url, defaultEgressPolicy, { resolver });
    assert.ok(registration.ok, 'public at registration');
    const rebinding = createEgressAgent(defaultEgressPolicy, { resolver });
    const before = ok.connections;
    try {
      const r = await attempt(rebinding, registration.url);
      assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error: 'refused: destination address is not allowed' });
    } finally {
      await rebinding.destroy();
    }
    assert.equal(lookups, 2);
    assert.equal(ok.connections, before);
  });

  it('a name that resolves to an allowlisted address is delivered to, with the name in Host', async () => {
    const named = createEgressAgent(allowLoopback, { resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      const r = await attempt(named, `http://receiver.example.test:${ok.port}/hook`);
      assert.equal(r.ok, true, r.error);
      assert.equal(ok.received.at(-1)?.headers.host, `receiver.example.test:${ok.port}`);
    } finally {
      await named.destroy();
    }
  });

  it('URLs the policy refuses by shape fail without touching the network', async () => {
    const before = ok.connections;
    const cases: Array<[string, string]> = [
      [`http://user:pw@127.0.0.1:${ok.port}/hook`, 'refused: must not contain credentials'],
      [`http://127.0.0.1:${ok.port}/hook#x`, 'refused: must not contain a fragment'],
      ['file:///etc/passwd', 'refused: only https URLs are allowed'],
      ['gopher://127.0.0.1:6379/_INFO', 'refused: only https URLs are allowed'],
      ['not a url', 'refused: must be an absolute https URL'],
      ['https://169.254.169.254/latest/meta-data/', 'refused: destination address is not allowed'],
    ];
    for (const [url, error] of cases) {
      const r = await attempt(agent, url);
      assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error }, url);
    }
    assert.equal(ok.connections, before);
  });

  it('a resolver that hangs is cut by the total timeout', async () => {
    const stuck = createEgressAgent(defaultEgressPolicy, { resolver: () => new Promise(() => {}) });
    try {
      const started = Date.now();
      const r = await attempt(stuck, 'https://stuck.example.com/hook', { timeoutMs: 200 });
      assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error: 'timeout' });
      assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
    } finally {
      await stuck.destroy();
    }
  });

  it('a failed look-up is a connection failure, not a throw', async () => {
    const nx = createEgressAgent(defaultEgressPolicy, {
      resolver: async (name) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      },
    });
    try {
      const r = await attempt(nx, 'https://nxdomain.example.com/hook');
      assert.deepEqual({ ok: r.ok, error: r.error }, { ok: false, error: 'connection failed: ENOTFOUND' });
    } finally {
      await nx.destroy();
    }
  });

  it('measures durationMs with the injected clock', async () => {
    const clock = new ManualClock(1_000_000);
    const stepping: Clock = {
      now: () => {
        const t = clock.now();
        clock.advance(125);
        return t;
      },
    };
    const r = await attempt(agent, ok.url, { clock: stepping });
    assert.equal(r.durationMs, 125);
  });
});
