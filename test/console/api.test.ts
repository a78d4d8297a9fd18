import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, PASSWORD } from './helpers.js';

const ADMIN = 'admin@console.test';

// The console API (docs/console.md): setup link, session + CSRF, administrators only, no CORS,
// the same management services as /v1 with the administrator as actor.
describe('console API', () => {
  let s: TestServer;
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  const v1 = (method: string, path: string, body?: unknown) =>
    s.request({
      method,
      path,
      headers: { authorization: `Bearer ${s.tenant.platformApiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  before(async () => {
    s = await startTestServer({ clock });
  });
  after(() => s.close());

  it('the setup link makes one administrator: CSRF-checked, single-use', async () => {
    const c = new ConsoleClient(s);
    const token = s.tenant.setupToken;
    const open = await c.call('GET', `/console/api/setup?token=${token}`);
    assert.equal(open.status, 200, open.text);
    assert.equal(open.json().open, true);
    c.csrf = open.json().csrf_token;
    const body = { token, email: ADMIN, password: PASSWORD };

    const noToken = await c.call('POST', '/console/api/setup', body, { 'x-csrf-token': undefined });
    assert.equal(noToken.status, 403);
    assert.equal(noToken.json().error, 'csrf_failed');
    const otherOrigin = await c.call('POST', '/console/api/setup', body, { origin: 'https://evil.example' });
    assert.equal(otherOrigin.status, 403);
    assert.equal(otherOrigin.json().error, 'csrf_failed');
    const noOrigin = await c.call('POST', '/console/api/setup', body, { origin: undefined });
    assert.equal(noOrigin.status, 403);
    assert.equal(noOrigin.json().error, 'csrf_failed');
    const crossSite = await c.call('POST', '/console/api/setup', body, { 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.json().error, 'csrf_failed');

    const form = await c.call('POST', '/console/api/setup', new URLSearchParams(body).toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    assert.equal(form.status, 415);
    assert.equal(form.json().error, 'unsupported_media_type');
    const short = await c.call('POST', '/console/api/setup', { ...body, password: 'short' });
    assert.equal(short.status, 400);
    assert.equal(short.json().error, 'invalid_request');

    const made = await c.call('POST', '/console/api/setup', body);
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json().user.email, ADMIN);
    assert.ok(!made.text.includes('password_hash'));

    const again = await c.call('POST', '/console/api/setup', { ...body, email: 'second@console.test' });
    assert.equal(again.status, 400);
    assert.equal(again.json().error, 'invalid_request');
    assert.equal((await c.call('GET', `/console/api/setup?token=${token}`)).json().open, false);

    const granted = (await v1('GET', '/v1/events?types=tenant_admin.granted')).json().data;
    assert.equal(granted.length, 1);
    assert.equal(granted[0].data.user_id, made.json().user.id);
  });

  it('a setup link expires after 24 hours (injected clock) and a malformed one is refused', async () => {
    const token = await s.server.ctx.admins.issueSetupToken(s.tenant.tenant.id);
    const c = new ConsoleClient(s);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${token}`)).json().csrf_token;
    clock.advance(24 * 3600_000 + 1);
    assert.equal((await c.call('GET', `/console/api/setup?token=${token}`)).json().open, false);
    const late = await c.call('POST', '/console/api/setup', { token, email: 'late@console.test', password: PASSWORD });
    assert.equal(late.status, 400);
    assert.equal(late.json().error, 'invalid_request');
    const bogus = await c.call('POST', '/console/api/setup', { token: 'nope', email: 'late@console.test', password: PASSWORD });
    assert.equal(bogus.status, 400);
    assert.equal(bogus.json().error, 'invalid_request');
    const missing = await c.call('GET', '/console/api/setup');
    assert.equal(missing.status, 400);
    assert.equal(missing.json().error, 'invalid_request');
  });

  it('not signed in: 401 login_required; a signed-in non-administrator: 403 forbidden', async () => {
    const anonymous = new ConsoleClient(s);
    for (const path of ['/console/api/session', '/console/api/organizations']) {
      const r = await anonymous.call('GET', path);
      assert.equal(r.status, 401);
      assert.equal(r.json().error, 'login_required');
    }
    const created = await v1('POST', '/v1/users', { email: 'plain@console.test', password: PASSWORD });
    assert.equal(created.status, 201, created.text);
    const plain = new ConsoleClient(s);
    await plain.signIn('plain@console.test');
    for (const [method, path] of [
      ['GET', '/console/api/session'],
      ['GET', '/console/api/organizations'],
      ['POST', '/console/api/organizations'],
    ] as const) {
      // The CSRF cookie is this browser's own: the mutation passes CSRF and is refused as non-administrator.
      plain.csrf = (await plain.call('GET', `/console/api/setup?token=${'x'.repeat(43)}`)).json().csrf_token;
      const r = await plain.call(method, path, method === 'POST' ? { name: 'Nope' } : undefined);
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.json().error, 'forbidden');
    }
  });

  it('an administrator acts through the /v1 services, audited as the user; mutations need the CSRF header and this origin', async () => {
    const c = new ConsoleClient(s);
    await c.signIn(ADMIN);
    const me = await c.call('GET', '/console/api/session');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.json().user.email, ADMIN);
    const adminId = me.json().user.id;

    const withoutToken = await c.call('POST', '/console/api/organizations', { name: 'Acme' }, { 'x-csrf-token': undefined });
    assert.equal(withoutToken.status, 403);
    assert.equal(withoutToken.json().error, 'csrf_failed');
    const wrongToken = await c.call('POST', '/console/api/organizations', { name: 'Acme' }, { 'x-csrf-token': 'A'.repeat(43) });
    assert.equal(wrongToken.status, 403);
    assert.equal(wrongToken.json().error, 'csrf_failed');
    const fromElsewhere = await c.call('POST', '/console/api/organizations', { name: 'Acme' }, { origin: 'https://evil.example' });
    assert.equal(fromElsewhere.status, 403);
    assert.equal(fromElsewhere.json().error, 'csrf_failed');
    assert.equal((await v1('GET', '/v1/organizations')).json().data.length, 0, 'nothing was created');

    const org = await c.call('POST', '/console/api/organizations', { name: 'Acme' });
    assert.equal(org.status, 201, org.text);
    const invalid = await c.call('POST', '/console/api/organizations', { name: '' });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.json().error, 'invalid_request');

    const key = await c.call('POST', '/console/api/api_keys', { name: 'from the console', scopes: ['organizations:read'] });
    assert.equal(key.status, 201, key.text);
    assert.match(key.json().key, /^sk_live_/);
    const events = (await v1('GET', '/v1/events?types=api_key.created,organization.created')).json().data as Array<{
      type: string;
      actor: unknown;
      data: Record<string, unknown>;
    }>;
    const minted = events.find((e) => e.type === 'api_key.created' && e.data.key_id === key.json().id);
    assert.deepEqual(minted?.actor, { type: 'user', id: adminId });
    assert.deepEqual(events.find((e) => e.type === 'organization.created')?.actor, { type: 'user', id: adminId });

    const revoked = await c.call('DELETE', `/console/api/api_keys/${key.json().id}`);
    assert.equal(revoked.status, 204, revoked.text);
  });

  it('sends no CORS headers, and /v1 still accepts only API keys', async () => {
    const c = new ConsoleClient(s);
    await c.signIn(ADMIN);
    const preflight = await c.call('OPTIONS', '/console/api/organizations', undefined, {
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
    });
    assert.ok(preflight.status >= 400, `preflight ${preflight.status}`);
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    const read = await c.call('GET', '/console/api/organizations', undefined, { origin: 'https://evil.example' });
    assert.equal(read.headers['access-control-allow-origin'], undefined);

    const v1WithCookie = await c.call('GET', '/v1/organizations');
    assert.equal(v1WithCookie.status, 401);
    assert.equal(v1WithCookie.json().error, 'invalid_token');
    const unknown = await c.call('GET', '/console/api/nothing-here');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json().error, 'not_found');
  });

  it('a setup link refused for a taken email stays usable; a removed administrator is refused at once', async () => {
    const token = await s.server.ctx.admins.issueSetupToken(s.tenant.tenant.id);
    const c = new ConsoleClient(s);
    c.csrf = (await c.call('GET', `/console/api/setup?token=${token}`)).json().csrf_token;
    const taken = await c.call('POST', '/console/api/setup', { token, email: ADMIN, password: PASSWORD });
    assert.equal(taken.status, 409);
    assert.equal(taken.json().error, 'conflict');
    assert.equal((await c.call('GET', `/console/api/setup?token=${token}`)).json().open, true, 'not consumed');
    const second = await c.call('POST', '/console/api/setup', { token, email: 'second-admin@console.test', password: PASSWORD });
    assert.equal(second.status, 201, second.text);

    const b = new ConsoleClient(s);
    await b.signIn('second-admin@console.test');
    assert.equal((await b.call('GET', '/console/api/organizations')).status, 200);
    assert.equal(await s.server.ctx.admins.revoke(s.tenant.tenant.id, second.json().user.id), true);
    const after = await b.call('GET', '/console/api/organizations');
    assert.equal(after.status, 403);
    assert.equal(after.json().error, 'forbidden');
    const revoked = (await v1('GET', '/v1/events?types=tenant_admin.revoked')).json().data;
    assert.equal(revoked[0].data.user_id, second.json().user.id);
  });

  it("another tenant's session cookie is not a session here", async () => {
    const c = new ConsoleClient(s);
    await c.signIn(ADMIN);
    const other = await s.createTenant(`localhost:${s.port}`);
    const cookie = [...c.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const r = await s.request({ host: other.tenant.host, path: '/console/api/organizations', headers: { cookie } });
    assert.equal(r.status, 401);
    assert.equal(r.json().error, 'login_required');
  });

  it('tokens of connected accounts go to API keys only, never to the console', async () => {
    const c = new ConsoleClient(s);
    await c.signIn(ADMIN);
    const org = (await v1('GET', '/v1/organizations')).json().data[0];
    const r = await c.call('POST', `/console/api/organizations/${org.id}/connect/accounts/cac_0000/token`);
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json().error, 'forbidden');
  });
});
