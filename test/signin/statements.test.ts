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
    s = await startSigninServer({ onStatement: (sql) => (/"webhook_deliveries"/.test(sql) ? undefined : statements.push(sql)) });
    web = await s.webClient({ scope: 'openid profile email' });
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
          scope: 'openid',
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
    sql.token = token.sql;
    return sql;
  }

  let S256Challenge: string;

  it('stays within its budget per exchange once warm, and reads no page texts from the database', async () => {
    S256Challenge = await S256(VERIFIER);
    await login(); // warm: tenant, client, keys, lifetimes and page texts cached
    const sql = await login();
    const counts = Object.fromEntries(Object.entries(sql).map(([k, v]) => [k, v.length]));
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const show = () => JSON.stringify(sql, null, 1);
    console.log(JSON.stringify(counts), total);
    assert.ok(total > 0, 'the listener sees the statements');
    assert.ok(
      !Object.values(sql)
        .flat()
        .some((q) => /page_texts/.test(q)),
      `page texts read again:\n${show()}`,
    );
  });
});
