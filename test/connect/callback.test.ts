import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { HttpResponse } from '../helpers/http.js';
import { Browser, signIn } from '../signin/helpers.js';
import { startVaultBed, type VaultBed } from './helpers.js';

/** The error page's code and message. */
function refusal(r: HttpResponse, status: number, message: RegExp): void {
  assert.equal(r.status, status, r.text.slice(0, 400));
  const m = /id="error" data-error="([^"]+)">([^<]*)</.exec(r.text);
  assert.ok(m, 'an error page');
  assert.match(m[2]!, message);
  assert.equal(r.headers.location, undefined, 'no redirect');
}

describe('/connect callback refusals', () => {
  let bed: VaultBed;
  const logs: string[] = [];
  const retrieved: string[] = [];
  before(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    bed = await startVaultBed({ logStream, config: { logLevel: 'debug' } });
  });
  after(async () => {
    // No upstream token, refresh token or client secret in any log line.
    const all = logs.join('');
    assert.ok(all.length > 0, 'logs were captured');
    for (const t of retrieved) assert.ok(!all.includes(t), 'a token in the logs');
    assert.ok(!all.includes(bed.upstreamClient.client_secret), 'the client secret in the logs');
    await bed.s.close();
  });

  let n = 0;
  const pair = () => bed.createUserPair(`user${++n}`);
  const withParams = (callback: string, edit: (q: URLSearchParams) => void) => {
    const u = new URL(callback, 'http://x');
    edit(u.searchParams);
    return `${u.pathname}?${u.searchParams}`;
  };

  it('completes with the right browser session, once; a reused state is refused', async () => {
    const u = await pair();
    const { b, callback } = await bed.startFlow(u.email, u.upstreamEmail);
    const ok = await b.get(callback);
    assert.equal(ok.status, 303);
    assert.match(ok.headers.location as string, /^\/connect\?connected=acct_/);
    refusal(await b.get(callback), 400, /already used/);
    const accountId = /acct_[0-9a-z]{26}/.exec(ok.headers.location as string)![0];
    const t = await bed.api('POST', `/organizations/${bed.orgId}/connect/accounts/${accountId}/token`);
    retrieved.push(t.json().access_token);
  });

  it('refuses a state from another browser session (same user or another user) or without a session, consuming nothing', async () => {
    const u = await pair();
    const { b, callback } = await bed.startFlow(u.email, u.upstreamEmail);
    const sameUserOtherSession = new Browser(bed.s.port, bed.s.tenant.tenant.host);
    await signIn(sameUserOtherSession, '/login', u.email);
    refusal(await sameUserOtherSession.get(callback), 400, /another browser session/);
    const v = await pair();
    const otherUser = new Browser(bed.s.port, bed.s.tenant.tenant.host);
    await signIn(otherUser, '/login', v.email);
    refusal(await otherUser.get(callback), 400, /another browser session/);
    refusal(await new Browser(bed.s.port, bed.s.tenant.tenant.host).get(callback), 400, /another browser session/);
    assert.equal((await b.get(callback)).status, 303, 'the rightful session still completes');
  });

  it('refuses a state minted for another provider', async () => {
    const other = await bed.api('POST', '/connect/providers', {
      name: 'Other',
      type: 'oidc',
      issuer: bed.upstream.tenant.issuer,
      client_id: 'x',
      client_secret: 'y',
    });
    assert.equal(other.status, 201, other.text);
    const u = await pair();
    const { b, callback } = await bed.startFlow(u.email, u.upstreamEmail);
    refusal(await b.get(callback.replace(bed.providerId, other.json().provider_id)), 400, /another provider/);
    assert.equal((await b.get(callback)).status, 303);
  });

  it('refuses a missing or unknown state', async () => {
    const u = await pair();
    const { b, callback } = await bed.startFlow(u.email, u.upstreamEmail);
    refusal(await b.get(withParams(callback, (q) => q.delete('state'))), 400, /no state/);
    refusal(await b.get(withParams(callback, (q) => q.set('state', 'forged'))), 400, /expired or is unknown/);
    refusal(await b.get(`/connect/${bed.providerId}/callback`), 400, /no state/);
  });

  it('refuses an upstream error (and the state is spent)', async () => {
    const u = await pair();
    const { b, callback } = await bed.startFlow(u.email, u.upstreamEmail);
    const denied = withParams(callback, (q) => {
      q.delete('code');
      q.set('error', 'access_denied');
      q.set('error_description', '<script>alert(1)</script>');
    });
    const r = await b.get(denied);
    refusal(r, 400, /refused the connection: access_denied/);
    assert.ok(!r.text.includes('<script>alert(1)'), 'the description is escaped');
    refusal(await b.get(callback), 400, /already used/);
  });

  it('refuses a missing code', async () => {
    const u = await pair();
    const { b, callback } = await bed.startFlow(u.email, u.upstreamEmail);
    refusal(await b.get(withParams(callback, (q) => q.delete('code'))), 400, /no authorization code/);
  });

  it("refuses an iss that is not the provider's, and a missing iss from a provider that sends one (RFC 9207)", async () => {
    const u = await pair();
    let flow = await bed.startFlow(u.email, u.upstreamEmail);
    assert.equal(new URL(flow.callback, 'http://x').searchParams.get('iss'), bed.upstream.tenant.issuer);
    refusal(await flow.b.get(withParams(flow.callback, (q) => q.set('iss', 'https://evil.example'))), 400, /failed its checks/);
    flow = await bed.startFlow(u.email, u.upstreamEmail, flow.b);
    refusal(await flow.b.get(withParams(flow.callback, (q) => q.delete('iss'))), 400, /failed its checks/);
  });

  it('refuses a code the upstream does not accept with 502 upstream_error', async () => {
    const u = await pair();
    const { b, callback } = await bed.startFlow(u.email, u.upstreamEmail);
    const r = await b.get(withParams(callback, (q) => q.set('code', 'not-a-code')));
    assert.equal(r.status, 502);
    assert.match(r.text, /data-error="upstream_error"/);
  });

  it('start page and start form: unknown provider, foreign organization, CSRF, and the authorization request sent upstream', async () => {
    const u = await pair();
    const b = new Browser(bed.s.port, bed.s.tenant.tenant.host);
    await signIn(b, '/login', u.email);
    refusal(await b.get('/connect/cpr_00000000000000000000000000'), 404, /does not exist/);
    const page = await b.get(`/connect/${bed.providerId}`);
    assert.equal(page.status, 200);
    assert.match(page.headers['content-security-policy'] as string, new RegExp(`form-action 'self' ${bed.upstream.tenant.issuer.replace(/[.]/g, '\\.')}`));
    const other = (await bed.api('POST', '/organizations', { name: 'Not mine' })).json().id as string;
    refusal(await b.submit(page, { organization_id: other }), 400, /member of/);
    const csrfless = await b.post(`/connect/${bed.providerId}`, { organization_id: bed.orgId });
    assert.equal(csrfless.status, 403);
    const r = await b.submit(page, { organization_id: bed.orgId });
    assert.equal(r.status, 303);
    const q = new URL(r.headers.location as string).searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), bed.upstreamClient.client_id);
    assert.equal(q.get('redirect_uri'), `${bed.s.tenant.tenant.issuer}/connect/${bed.providerId}/callback`);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('state')!, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(q.get('scope'), 'openid offline_access');
    // The state is stored only as a hash, the verifier only encrypted.
    const flows = JSON.stringify(await bed.s.server.ctx.db.kysely.selectFrom('upstream_round_trips').selectAll().where('purpose', '=', 'connect').execute());
    assert.ok(!flows.includes(q.get('state')!));
  });
});
