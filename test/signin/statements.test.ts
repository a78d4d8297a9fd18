/**
 * What a code-flow login costs the database (docs/performance.md): the SQL statements each HTTP
 * exchange of PAR → /authorize → login page → login POST → /token runs once the instance is warm
 * (caches filled), counted through the instance's statement listener. A bound that a change
 * exceeds fails here, with the statements it ran.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { basic } from '../oauth/helpers.js';
import { decodeEntities, location, PASSWORD, REDIRECT, S256, type SigninTestServer, startSigninServer, VERIFIER } from './helpers.js';

describe('SQL statements per exchange of a code-flow login', () => {
  let s: SigninTestServer;
  let web: { client_id: string; client_secret: string };
  let statements: string[] = [];
  before(async () => {
    // The webhook outbox's poll runs on a timer, not for a request: left out.
    // Left out: the outboxes' timer polls (webhooks, back-channel logout, email) and the
    // housekeeping sweeps of expired rows, which run now and then beside any request, and on
    // PostgreSQL the dispatchers' read of the database clock before each poll.
    const background = /"(webhook_deliveries|logout_deliveries|email_outbox)"|^delete from |clock_timestamp\(\)/i;
    // Caches kept for the whole test (KEYHALL_CACHE_TTL_MS): a warm exchange is measured, not one that
    // happens to cross the default 5-second TTL on a busy machine and reload a tenant or a client.
    s = await startSigninServer({
      config: { cacheTtlMs: 60_000 },
      onStatement: (sql) => (background.test(sql) ? undefined : statements.push(sql)),
    });
    web = await s.webClient({ scope: 'openid profile email offline_access' });
    await s.createUser('statements@example.com');
  });
  after(() => s.close());

  /** Runs `step` and returns the statements it made the instance run. */
  async function counted<T>(step: () => Promise<T>): Promise<{ value: T; sql: string[] }> {
    statements = [];
    const value = await step();
    const sql = statements;
    statements = [];
    return { value, sql };
  }

  let tokens: { access_token: string; refresh_token: string } | undefined;

  async function login(): Promise<Record<string, string[]>> {
    const sql: Record<string, string[]> = {};
    const b = s.browser();
    const par = await counted(() =>
      s.post(
        '/par',
        {
          response_type: 'code',
          client_id: web.client_id,
          redirect_uri: REDIRECT,
          scope: 'openid profile email offline_access',
          code_challenge: S256Challenge,
          code_challenge_method: 'S256',
        },
        { authorization: basic(web.client_id, web.client_secret) },
      ),
    );
    assert.equal(par.value.status, 201);
    sql.par = par.sql;
    const requestUri = par.value.json().request_uri as string;
    const authorize = await counted(() => b.get(`/authorize?${new URLSearchParams({ client_id: web.client_id, request_uri: requestUri })}`));
    assert.equal(authorize.value.status, 303);
    sql.authorize = authorize.sql;
    const page = await counted(() => b.get(location(authorize.value)));
    assert.equal(page.value.status, 200);
    sql.page = page.sql;
    const form = /<form method="post" action="([^"]+)">/.exec(page.value.text);
    assert.ok(form);
    const posted = await counted(() => b.submit(page.value, { email: 'statements@example.com', password: PASSWORD }));
    assert.equal(posted.value.status, 303);
    sql.login = posted.sql;
    const code = new URL(location(posted.value)).searchParams.get('code');
    assert.ok(code, decodeEntities(posted.value.text).slice(0, 200));
    const token = await counted(() =>
      s.post(
        '/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER },
        { authorization: basic(web.client_id, web.client_secret) },
      ),
    );
    assert.equal(token.value.status, 200);
    assert.ok(token.value.json().id_token);
    tokens = token.value.json();
    sql.token = token.sql;
    return sql;
  }

  let S256Challenge: string;

  it('stays within its budget per exchange once warm, and reads no page texts from the database', async () => {
    S256Challenge = await S256(VERIFIER);
    await login(); // warm: tenant, client, keys, lifetimes and page texts cached
    const sql = await login();
    const counts = Object.fromEntries(Object.entries(sql).map(([k, v]) => [k, v.length]));
    const show = () => `${JSON.stringify(counts)}\n${JSON.stringify(sql, null, 1)}`;
    assert.ok(
      !Object.values(sql)
        .flat()
        .some((q) => /page_texts/.test(q)),
      `page texts read again:\n${show()}`,
    );
    // The budgets of docs/performance.md ("Code flow"), begin and commit included.
    // PostgreSQL: one more at the login (the events' advisory lock), the refresh family in one statement at /token.
    // /token: one for back-channel logout, the client recorded with the session (docs/performance.md).
    const pg = s.server.ctx.db.dialect === 'postgres';
    const budget: Record<string, number> = { par: 1, authorize: 3, page: 3, login: pg ? 23 : 22, token: pg ? 6 : 9 };
    for (const [exchange, max] of Object.entries(budget))
      assert.ok(counts[exchange]! <= max, `${exchange}: ${counts[exchange]} statements > ${max}\n${show()}`);
  });

  it('answers /userinfo with two statements: the revocation check and the user with their memberships', async () => {
    const userinfo = await counted(() => s.request({ path: '/userinfo', headers: { authorization: `Bearer ${tokens!.access_token}` } }));
    assert.equal(userinfo.value.status, 200);
    assert.equal(userinfo.value.json().email, 'statements@example.com');
    assert.deepEqual(userinfo.value.json().orgs, []);
    assert.equal(userinfo.sql.length, 2, JSON.stringify(userinfo.sql, null, 1));
  });

  it('rotates a refresh token with one round trip after the look-up on PostgreSQL (a transaction on SQLite)', async () => {
    const refresh = (rt: string) =>
      s.post('/token', { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(web.client_id, web.client_secret) });
    const first = await counted(() => refresh(tokens!.refresh_token));
    assert.equal(first.value.status, 200);
    const second = await counted(() => refresh(first.value.json().refresh_token));
    assert.equal(second.value.status, 200);
    // Look-up + one statement; or look-up, begin, update, insert, commit.
    const expected = s.server.ctx.db.dialect === 'postgres' ? 2 : 5;
    assert.equal(second.sql.length, expected, JSON.stringify(second.sql, null, 1));
    // The token rotated away is refused (reuse detection still armed).
    const reused = await refresh(first.value.json().refresh_token);
    assert.equal(reused.status, 400);
    assert.equal(reused.json().error, 'invalid_grant');
  });
});
