import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/kernel/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Api, expectError, v1 } from '../helpers/v1.js';
import { Browser, PASSWORD, signIn } from '../signin/helpers.js';

interface SessionView {
  id: string;
  created_at: string;
  auth_time: string;
  last_seen_at: string;
  idle_expires_at: string;
  expires_at: string;
  amr: string[];
  acr: string;
  mfa_pending: boolean;
  user_agent: string | null;
  device: string | null;
  ip: string | null;
  method: string;
  idp: string | null;
}

// GET /v1/users/{id}/sessions and DELETE /v1/users/{id}/sessions/{sessionId} (docs/api.md).
describe('/v1/users/{id}/sessions', () => {
  let s: TestServer;
  let api: Api;
  const clock = new ManualClock(Date.parse('2026-03-01T00:00:00Z'));

  /** A new user with a password and `n` browsers signed in as them. */
  async function userWithSessions(email: string, n: number): Promise<{ id: string; browsers: Browser[] }> {
    const created = await api('POST', '/users', { email, password: PASSWORD });
    assert.equal(created.status, 201, created.text);
    const browsers: Browser[] = [];
    for (let i = 0; i < n; i++) {
      const b = new Browser(s.port, s.tenant.tenant.host);
      const r = await signIn(b, '/login', email, PASSWORD);
      assert.equal(r.status, 303, r.text);
      browsers.push(b);
      clock.advance(1000);
    }
    return { id: created.json().id, browsers };
  }

  const list = async (userId: string, query = '') => {
    const r = await api('GET', `/users/${userId}/sessions${query}`);
    assert.equal(r.status, 200, r.text);
    return r.json() as { data: SessionView[]; has_more: boolean; next_cursor: string | null };
  };

  /** Whether a browser's session still signs it in (the hosted /sessions page answers 200). */
  const signedIn = async (b: Browser) => (await b.get('/sessions')).status === 200;

  before(async () => {
    s = await startTestServer({ clock });
    api = v1(s, s.tenant.platformApiKey);
  });
  after(() => s.close());

  it("lists a user's live sessions oldest first, with methods and client hints, never the cookie", async () => {
    const { id, browsers } = await userWithSessions('list@example.com', 2);
    const r = await api('GET', `/users/${id}/sessions`);
    assert.equal(r.status, 200, r.text);
    const body = r.json() as { data: SessionView[]; has_more: boolean; next_cursor: string | null };
    assert.equal(body.data.length, 2);
    assert.equal(body.has_more, false);
    assert.equal(body.next_cursor, null);
    assert.ok(body.data[0]!.id < body.data[1]!.id);
    const first = body.data[0]!;
    assert.match(first.id, /^ses_/);
    assert.deepEqual(first.amr, ['pwd']);
    assert.equal(first.acr, 'pwd');
    assert.equal(first.mfa_pending, false);
    assert.equal(first.created_at, '2026-03-01T00:00:00.000Z');
    assert.ok(Date.parse(first.expires_at) > Date.parse(first.created_at));
    assert.ok(Date.parse(first.idle_expires_at) > Date.parse(first.created_at));
    assert.equal(first.ip, '127.0.0.1');
    assert.deepEqual(Object.keys(first).sort(), [
      'acr',
      'amr',
      'auth_time',
      'created_at',
      'device',
      'expires_at',
      'id',
      'idle_expires_at',
      'idp',
      'ip',
      'last_seen_at',
      'method',
      'mfa_pending',
      'user_agent',
    ]);
    // How the session signed in (docs/account.md): a password sign-in, no social connection.
    assert.equal(first.method, 'password');
    assert.equal(first.idp, null);
    // Neither the cookie value nor anything like its hash is in the answer.
    for (const b of browsers) for (const value of b.cookies.values()) assert.ok(!r.text.includes(value));
    assert.ok(!/token|hash|cookie/i.test(r.text));
  });

  it('pages with limit and after; a cursor from another list or a bad limit is 400', async () => {
    const { id } = await userWithSessions('pages@example.com', 3);
    const p1 = await list(id, '?limit=2');
    assert.equal(p1.data.length, 2);
    assert.equal(p1.has_more, true);
    const p2 = await list(id, `?limit=2&after=${p1.next_cursor}`);
    assert.equal(p2.data.length, 1);
    assert.equal(p2.has_more, false);
    assert.equal(new Set([...p1.data, ...p2.data].map((x) => x.id)).size, 3);

    expectError(await api('GET', `/users/${id}/sessions?limit=0`), 400, 'invalid_request');
    expectError(await api('GET', `/users/${id}/sessions?limit=101`), 400, 'invalid_request');
    expectError(await api('GET', `/users/${id}/sessions?after=not-a-cursor`), 400, 'invalid_request');
    const users = await api('GET', '/users?limit=1');
    expectError(await api('GET', `/users/${id}/sessions?after=${users.json().next_cursor}`), 400, 'invalid_request');
    expectError(await api('GET', `/users/${id}/sessions?colour=red`), 400, 'invalid_request');
  });

  it('an unknown or malformed user is 404 not_found', async () => {
    expectError(await api('GET', '/users/user_0000000000000000000000000/sessions'), 404, 'not_found');
    expectError(await api('GET', '/users/nope/sessions'), 404, 'not_found');
    expectError(await api('DELETE', '/users/user_0000000000000000000000000/sessions/ses_0000000000000000000000000'), 404, 'not_found');
  });

  it('ends one session: 204, audited as session.revoked, the browser is signed out, the others stay', async () => {
    const { id, browsers } = await userWithSessions('end@example.com', 2);
    const [keep, end] = (await list(id)).data;
    assert.ok(keep && end);
    assert.equal(await signedIn(browsers[1]!), true);

    const r = await api('DELETE', `/users/${id}/sessions/${end.id}`);
    assert.equal(r.status, 204, r.text);
    assert.deepEqual(
      (await list(id)).data.map((x) => x.id),
      [keep.id],
    );
    assert.equal(await signedIn(browsers[1]!), false);
    assert.equal(await signedIn(browsers[0]!), true);

    const events = (await api('GET', '/events?types=session.revoked&order=desc&limit=1')).json().data;
    assert.equal(events[0].data.session_id, end.id);
    assert.equal(events[0].data.user_id, id);
    assert.equal(events[0].actor.type, 'api_key');

    // Already ended: nothing to end.
    expectError(await api('DELETE', `/users/${id}/sessions/${end.id}`), 404, 'not_found');
  });

  it("another user's session, an unknown one or a malformed id is 404 not_found", async () => {
    const a = await userWithSessions('a@example.com', 1);
    const b = await userWithSessions('b@example.com', 1);
    const [sa] = (await list(a.id)).data;
    expectError(await api('DELETE', `/users/${b.id}/sessions/${sa!.id}`), 404, 'not_found');
    expectError(await api('DELETE', `/users/${a.id}/sessions/ses_0000000000000000000000000`), 404, 'not_found');
    expectError(await api('DELETE', `/users/${a.id}/sessions/key_0000000000000000000000000`), 404, 'not_found');
    assert.equal((await list(a.id)).data.length, 1);
    assert.equal(await signedIn(a.browsers[0]!), true);
  });

  it("another tenant's key sees neither the user nor the session", async () => {
    const a = await userWithSessions('tenant@example.com', 1);
    const [sa] = (await list(a.id)).data;
    const other = await s.createTenant(`other.test:${s.port}`);
    const otherApi = v1(s, other.platformApiKey, other.tenant.host);
    expectError(await otherApi('GET', `/users/${a.id}/sessions`), 404, 'not_found');
    expectError(await otherApi('DELETE', `/users/${a.id}/sessions/${sa!.id}`), 404, 'not_found');
    const theirs = await otherApi('POST', '/users', { email: 'tenant@example.com' });
    expectError(await otherApi('DELETE', `/users/${theirs.json().id}/sessions/${sa!.id}`), 404, 'not_found');
    assert.equal(await signedIn(a.browsers[0]!), true);
  });

  it('an ended session (idle timeout) is neither listed nor ended again', async () => {
    const { id } = await userWithSessions('idle@example.com', 1);
    const [live] = (await list(id)).data;
    clock.advance(s.config.sessionIdleSeconds * 1000 + 1);
    assert.deepEqual((await list(id)).data, []);
    expectError(await api('DELETE', `/users/${id}/sessions/${live!.id}`), 404, 'not_found');
  });

  it('needs users:read to list and users:write to end, on a platform key', async () => {
    const { id } = await userWithSessions('perm@example.com', 1);
    const [one] = (await list(id)).data;
    const readOnly = await api('POST', '/api_keys', { name: 'ro', scopes: ['users:read'] });
    assert.equal(readOnly.status, 201, readOnly.text);
    const ro = v1(s, readOnly.json().key);
    assert.equal((await ro('GET', `/users/${id}/sessions`)).status, 200);
    expectError(await ro('DELETE', `/users/${id}/sessions/${one!.id}`), 403, 'insufficient_scope');
    const org = (await api('POST', '/organizations', { name: 'Perm' })).json().id;
    const orgKey = await api('POST', `/organizations/${org}/api_keys`, { name: 'o', scopes: ['users:read'] });
    assert.equal(orgKey.status, 201, orgKey.text);
    expectError(await v1(s, orgKey.json().key)('GET', `/users/${id}/sessions`), 403, 'forbidden');
    expectError(await api('GET', `/users/${id}/sessions`, undefined, { authorization: 'Bearer sk_live_nope' }), 401, 'invalid_token');
  });
});
