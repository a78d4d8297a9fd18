import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import parsePrometheus, { type Family } from 'parse-prometheus-text-format';
import { onPostgres } from '../helpers/db.js';
import { request } from '../helpers/http.js';
import { fail500, type Receiver, startReceiver } from '../helpers/receiver.js';
import { v1 } from '../helpers/v1.js';
import { basic } from '../oauth/helpers.js';
import { signIn, type SigninTestServer, startSigninServer } from '../signin/helpers.js';

const TOKEN = 'metrics-token-0123456789abcdef0123456789';

async function scrape(
  port: number,
  headers: Record<string, string> = {},
  host = `127.0.0.1:${port}`,
): Promise<{ text: string; families: Map<string, Family> }> {
  const r = await request(port, { host, path: '/metrics', headers });
  assert.equal(r.status, 200, r.text);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  // A real exposition-format parser: the whole body must parse.
  const families = new Map(parsePrometheus(r.text).map((f) => [f.name, f]));
  return { text: r.text, families };
}

/**
 * A histogram's `_count` for exact labels, read from the exposition lines:
 * parse-prometheus-text-format folds labelled histogram series into one (it loses their labels),
 * so its histogram output is not used.
 */
function histogramCount(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}_count{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The value of one sample of a counter or gauge whose labels include `labels`. */
function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  if (!family) return 0;
  const matching = family.metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return matching.reduce((sum, m) => sum + Number(m.value ?? m.count ?? 0), 0);
}

describe('Prometheus metrics on their own port', () => {
  let s: SigninTestServer;
  let rx: Receiver;
  let metricsPort: number;
  before(async () => {
    s = await startSigninServer({
      config: { metricsPort: 0, egressAllow: '127.0.0.1/32', dispatchIntervalMs: 60_000, webhookRetrySchedule: '0,600', databasePoolSize: 4 },
    });
    metricsPort = s.server.metricsPort!;
    rx = await startReceiver(fail500);
  });
  after(async () => {
    await rx.close();
    await s.close();
  });

  it('count requests, tokens per grant, logins, webhook outcomes and backlog; no secret in any label', async () => {
    const before = await scrape(metricsPort);
    const app = await s.createClient({ grant_types: ['client_credentials'], scope: 'read' });
    const auth = basic(app.client_id, app.client_secret!);
    const tokens: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: auth });
      assert.equal(r.status, 200, r.text);
      tokens.push(r.json().access_token);
    }
    const bad = await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(app.client_id, 'wrong') });
    assert.equal(bad.status, 401);
    // An unknown grant type is not a label value.
    assert.equal((await s.post('/token', { grant_type: 'urn:secret:grant' }, { authorization: auth })).status, 400);

    const user = await s.createUser('ada@example.com');
    assert.ok(user.id);
    const okLogin = await signIn(s.browser(), '/login', 'ada@example.com');
    assert.equal(okLogin.status, 303, okLogin.text.slice(0, 200));
    const badLogin = await signIn(s.browser(), '/login', 'ada@example.com', 'not the password');
    assert.equal(badLogin.status, 401);

    // A webhook whose receiver fails: one attempt, then a retry scheduled (backlog 1).
    const api = v1(s, s.tenant.platformApiKey);
    const org = (await api('POST', '/organizations', { name: 'Metrics' })).json().id as string;
    const hook = await api('POST', `/organizations/${org}/webhooks`, { url: rx.url, events: ['member.added'] });
    assert.equal(hook.status, 201, hook.text);
    assert.equal((await api('POST', `/organizations/${org}/members`, { user_id: user.id })).status, 201);
    await s.server.dispatcher.tick();
    await s.server.dispatcher.idle();
    assert.equal(rx.received.length, 1);

    const after = await scrape(metricsPort);
    const f = after.families;
    const delta = (name: string, labels: Record<string, string>) => value(f, name, labels) - value(before.families, name, labels);
    assert.equal(delta('keyhall_http_requests_total', { family: 'token', status_class: '2xx' }), 2);
    assert.equal(delta('keyhall_http_requests_total', { family: 'token', status_class: '4xx' }), 2);
    const labels = 'family="token",status_class="2xx"';
    assert.equal(
      histogramCount(after.text, 'keyhall_http_request_duration_seconds', labels) -
        histogramCount(before.text, 'keyhall_http_request_duration_seconds', labels),
      2,
      'histogram count',
    );
    assert.ok(delta('keyhall_http_requests_total', { family: 'management', status_class: '2xx' }) >= 3);
    assert.equal(value(f, 'keyhall_tokens_issued_total', { grant_type: 'client_credentials' }), 2);
    assert.equal(f.get('keyhall_tokens_issued_total')!.metrics.length, 1, 'only grants that issued');
    assert.equal(value(f, 'keyhall_logins_total', { outcome: 'succeeded' }), 1);
    assert.equal(value(f, 'keyhall_logins_total', { outcome: 'invalid' }), 1);
    assert.equal(value(f, 'keyhall_webhook_deliveries_total', { outcome: 'retry' }), 1);
    assert.equal(value(f, 'keyhall_webhook_backlog'), 1);
    assert.equal(value(f, 'keyhall_webhook_oldest_due_age_seconds'), 0, 'the retry is not due yet');
    assert.ok(f.has('nodejs_eventloop_lag_seconds'), 'event-loop lag');
    assert.ok(value(f, 'process_cpu_seconds_total') > 0, 'process metrics');
    if (onPostgres) {
      assert.equal(value(f, 'keyhall_db_pool_max'), 4, 'KEYHALL_DATABASE_POOL_SIZE');
      assert.ok(value(f, 'keyhall_db_pool_connections') >= 1);
    } else {
      assert.ok(!f.has('keyhall_db_pool_connections'), 'no pool on SQLite');
    }

    // Labels are fixed vocabularies: no secret, token, client id, host or path anywhere.
    const secrets = [
      app.client_secret!,
      app.client_id,
      ...tokens,
      s.tenant.platformApiKey,
      hook.json().secret,
      'urn:secret:grant',
      s.tenant.tenant.host,
      s.tenant.tenant.id,
      'not the password',
      'ada@example.com',
    ];
    for (const secret of secrets) assert.ok(!after.text.includes(secret), `the exposition does not contain ${secret.slice(0, 12)}…`);
    const families = new Set([
      'token',
      'introspect',
      'revoke',
      'par',
      'authorize',
      'userinfo',
      'health',
      'metrics',
      'discovery',
      'management',
      'scim',
      'screens',
      'other',
      'unmatched',
    ]);
    for (const m of f.get('keyhall_http_requests_total')!.metrics) {
      assert.deepEqual(Object.keys(m.labels!).sort(), ['family', 'status_class']);
      assert.ok(families.has(m.labels!.family!), m.labels!.family);
      assert.match(m.labels!.status_class!, /^[1-5]xx$/);
    }
  });

  it('is not on the main listener: /metrics there is a 404 on any host', async () => {
    const tenantHost = await s.request({ path: '/metrics' });
    assert.equal(tenantHost.status, 404);
    const otherHost = await request(s.port, { host: 'metrics.invalid', path: '/metrics' });
    assert.equal(otherHost.status, 404);
    assert.equal(otherHost.json().error, 'unknown_tenant');
  });

  it('the metrics port answers GET /metrics only', async () => {
    const post = await request(metricsPort, { method: 'POST', path: '/metrics', body: '' });
    assert.equal(post.status, 405);
    assert.equal(post.json().error, 'method_not_allowed');
    assert.equal(post.headers.allow, 'GET, HEAD');
    const other = await request(metricsPort, { path: '/token' });
    assert.equal(other.status, 404);
    assert.equal(other.json().error, 'not_found');
  });
});

describe('Prometheus metrics behind a bearer token, with tenant labels', () => {
  let s: SigninTestServer;
  before(async () => {
    s = await startSigninServer({ config: { metricsToken: TOKEN, metricsTenantLabel: 'true' } });
  });
  after(() => s.close());

  it('answers /metrics on the main listener only to the token', async () => {
    const none = await s.request({ path: '/metrics' });
    assert.equal(none.status, 401);
    assert.equal(none.json().error, 'invalid_token');
    assert.match(String(none.headers['www-authenticate']), /^Bearer/);
    const wrong = await s.request({ path: '/metrics', headers: { authorization: `Bearer ${TOKEN}x` } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json().error, 'invalid_token');
    const basicAuth = await s.request({ path: '/metrics', headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } });
    assert.equal(basicAuth.status, 401);

    const app = await s.createClient({ grant_types: ['client_credentials'], scope: 'read' });
    assert.equal((await s.post('/token', { grant_type: 'client_credentials' }, { authorization: basic(app.client_id, app.client_secret!) })).status, 200);
    const { families, text } = await scrape(s.port, { authorization: `Bearer ${TOKEN}` }, s.tenant.tenant.host);
    assert.equal(value(families, 'keyhall_tokens_issued_total', { grant_type: 'client_credentials', tenant: s.tenant.tenant.id }), 1);
    assert.equal(value(families, 'keyhall_http_requests_total', { family: 'token', status_class: '2xx', tenant: s.tenant.tenant.id }), 1);
    assert.ok(!text.includes(TOKEN), 'the token is not in the exposition');
    assert.equal(s.server.metricsPort, undefined, 'no metrics port was asked for');
  });
});
