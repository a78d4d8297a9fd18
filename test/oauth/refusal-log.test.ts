import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { basic, type OAuthTestServer, serviceClient, startOAuthServer } from './helpers.js';

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
  refusals() {
    return this.lines.filter((l) => l.msg === 'oauth request refused');
  }
}

describe('protocol refusals are logged with the OAuth error, the client_id and the tenant', () => {
  let s: OAuthTestServer;
  const log = new LogCapture();
  before(async () => {
    s = await startOAuthServer({ config: { logLevel: 'info' }, logStream: log });
  });
  after(() => s.close());

  it('a failed /token (wrong secret, by post) logs invalid_client, the client id and the tenant, and no secret', async () => {
    const c = await serviceClient(s);
    const wrong = `cs_${'x'.repeat(40)}`;
    const r = await s.post('/token', { grant_type: 'client_credentials', client_id: c.client_id, client_secret: wrong });
    assert.equal(r.status, 401);
    assert.equal(r.json().error, 'invalid_client');
    const line = log.refusals().find((l) => l.client_id === c.client_id);
    assert.ok(line, 'a refusal line names the client');
    assert.equal(line.oauth_error, 'invalid_client');
    assert.equal(line.status, 401);
    assert.equal(line.tenant, s.tenant.tenant.id);
    assert.ok(!log.raw.includes(wrong), 'the presented secret is never logged');
    assert.ok(!log.raw.includes(c.client_secret!), 'the real secret is never logged');
  });

  it('Basic credentials: the client id from the header, never the secret', async () => {
    const c = await serviceClient(s, { token_endpoint_auth_method_strict: true });
    const r = await s.post('/token', { grant_type: 'client_credentials', scope: 'admin' }, { authorization: basic(c.client_id, c.client_secret!) });
    assert.equal(r.status, 400);
    assert.equal(r.json().error, 'invalid_scope');
    const line = log.refusals().find((l) => l.client_id === c.client_id && l.oauth_error === 'invalid_scope');
    assert.ok(line);
    assert.ok(!log.raw.includes(c.client_secret!));
  });

  it('/introspect, /revoke, /par, /userinfo and /authorize refusals are logged too; tokens are not', async () => {
    const c = await serviceClient(s);
    await s.post('/introspect', { token: 'at_secret_value', client_id: c.client_id, client_secret: 'cs_bad' });
    await s.post('/revoke', { token: 'rt_secret_value', client_id: c.client_id, client_secret: 'cs_bad' });
    await s.post('/par', { response_type: 'code', client_id: c.client_id, client_secret: 'cs_bad' });
    await s.request({ method: 'GET', path: '/userinfo', headers: { authorization: 'Bearer not.a.token' } });
    await s.request({ method: 'GET', path: `/authorize?client_id=${c.client_id}&response_type=token` });
    const paths = log.refusals().map((l) => (l.req as { url?: string } | undefined)?.url);
    const codes = log.refusals().map((l) => l.oauth_error);
    assert.ok(codes.includes('invalid_client'));
    assert.ok(codes.includes('invalid_token'), 'the /userinfo refusal');
    assert.ok(codes.filter((c) => c === 'invalid_client').length >= 3, `introspect, revoke, par: ${codes.join(',')} ${paths.join(',')}`);
    assert.ok(
      log.refusals().some((l) => l.client_id === c.client_id && l.oauth_error !== 'invalid_client'),
      `/authorize: ${JSON.stringify(log.refusals().slice(-1))}`,
    );
    for (const secret of ['at_secret_value', 'rt_secret_value', 'cs_bad']) assert.ok(!log.raw.includes(secret), secret);
  });

  it('every request gets exactly one access line: request id, tenant, route, status, duration, error code; never the query', async () => {
    const c = await serviceClient(s);
    const ok = await s.post('/token?probe=query-secret-1', { grant_type: 'client_credentials' }, { authorization: basic(c.client_id, c.client_secret!) });
    assert.equal(ok.status, 200);
    const refused = await s.post('/token', { grant_type: 'client_credentials', scope: 'admin' }, { authorization: basic(c.client_id, c.client_secret!) });
    assert.equal(refused.status, 400);
    const linesOf = (r: { headers: Record<string, unknown> }) => log.lines.filter((l) => l.reqId === r.headers['x-request-id']);
    const [okLine, ...moreOk] = linesOf(ok);
    assert.equal(moreOk.length, 0, 'one line for a served request');
    assert.equal(okLine!.msg, 'request completed');
    assert.equal(okLine!.tenant, s.tenant.tenant.id);
    assert.equal(okLine!.method, 'POST');
    assert.equal(okLine!.url, '/token');
    assert.equal(okLine!.route, '/token');
    assert.equal(okLine!.status, 200);
    assert.equal(okLine!.oauth_error, null);
    assert.equal(typeof okLine!.ms, 'number');
    assert.ok(!log.raw.includes('query-secret-1'), 'the query string is never logged');
    const access = linesOf(refused).filter((l) => l.msg === 'request completed');
    assert.equal(access.length, 1);
    assert.equal(access[0]!.status, 400);
    assert.equal(access[0]!.oauth_error, 'invalid_scope');
    assert.ok(!log.lines.some((l) => l.msg === 'incoming request'), "Fastify's own request lines are off");
  });
});
