import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { Browser, signIn, startSigninServer, type SigninTestServer } from '../signin/helpers.js';
import { expectError, v1, type Api } from '../helpers/v1.js';
import { finished, importFile, storedHash } from './helpers.js';

/** Export → import round trip (issue 33): every user signs in on the other tenant with the same password. */
describe('tenant export and the round trip into another tenant', () => {
  let s: SigninTestServer;
  let api: Api;
  let tenantId: string;
  let clientSecret: string;
  before(async () => {
    s = await startSigninServer();
    api = v1(s, s.tenant.platformApiKey);
    tenantId = s.tenant.tenant.id;
    const users = s.server.ctx.management.users;
    const ada = await users.create(tenantId, { type: 'system', id: null }, { email: 'ada@example.com', password: 'ada password 1', name: 'Ada' });
    await users.create(tenantId, { type: 'system', id: null }, { email: 'bob@example.com', password: 'bob password 2' });
    // An imported hash not yet rehashed travels with its format and parameters.
    const job = await importFile(api, {
      format: 'auth0',
      data: JSON.stringify({ _id: 'x1', email: 'carol@example.com', passwordHash: bcrypt.hashSync('carol password 3', 4) }),
    });
    assert.equal(job.counts.created, 1);
    const org = (await api('POST', '/organizations', { name: 'Acme', slug: 'acme' })).json();
    assert.equal((await api('POST', `/organizations/${org.id}/members`, { user_id: ada.id, role: 'admin' })).status, 201);
    clientSecret = (await s.webClient()).client_secret;
    assert.equal((await api('POST', '/resource_servers', { name: 'Orders', identifier: 'https://orders.example', scopes: ['orders:read'] })).status, 201);
  });
  after(() => s.close());

  async function exportNow(key: string, includeSecrets: boolean): Promise<string> {
    const started = await v1(s, key)('POST', '/exports', { include_secrets: includeSecrets });
    assert.equal(started.status, 202, started.text);
    assert.match(started.json().id, /^exp_/);
    const job = await finished(v1(s, key), `/exports/${started.json().id}`);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.include_secrets, includeSecrets);
    const file = await v1(s, key)('GET', `/exports/${job.id}/download`);
    assert.equal(file.status, 200);
    assert.match(String(file.headers['content-type']), /^application\/x-ndjson/);
    assert.equal(file.headers['cache-control'], 'no-store');
    return file.text;
  }

  it('writes organizations, users, members, clients (no secrets) and resource servers; hashes only with include_secrets', async () => {
    const text = await exportNow(s.tenant.platformApiKey, false);
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const types = lines.map((l) => l.type);
    for (const t of ['header', 'organization', 'user', 'member', 'client', 'resource_server']) assert.ok(types.includes(t), t);
    assert.equal(lines.filter((l) => l.type === 'user').length, 3);
    assert.ok(!text.includes('password_hash'), 'no hash without include_secrets');
    assert.ok(!text.includes(clientSecret), 'never a client secret');
    assert.ok(!/secret/i.test(text.replace(/client_secret_(basic|post|jwt)|include_secrets/g, '')), 'no secret field');
    const member = lines.find((l) => l.type === 'member');
    assert.equal(member.role, 'admin');
  });

  it('include_secrets needs a key holding every permission (403 insufficient_scope); unknown exports 404', async () => {
    const narrow = await s.server.ctx.management.apiKeys.createAsOperator(tenantId, null, { name: 'export only', scopes: ['exports:read'] });
    expectError(await v1(s, narrow.key)('POST', '/exports', { include_secrets: true }), 403, 'insufficient_scope');
    // Without secrets it may.
    assert.ok((await exportNow(narrow.key, false)).includes('"type":"user"'));
    const importer = await s.server.ctx.management.apiKeys.createAsOperator(tenantId, null, { name: 'import only', scopes: ['imports:write'] });
    expectError(await v1(s, importer.key)('POST', '/exports', {}), 403, 'insufficient_scope');
    expectError(await api('GET', '/exports/exp_00000000000000000000000000'), 404, 'not_found');
    expectError(await api('GET', '/exports/exp_00000000000000000000000000/download'), 404, 'not_found');
    expectError(await api('POST', '/exports', { include_secrets: 'yes' }), 400, 'invalid_request');
  });

  it('round trip: export with secrets, import into another tenant, every user signs in there with the same password', async () => {
    const text = await exportNow(s.tenant.platformApiKey, true);
    assert.match(text, /"password_hash":"\$argon2id\$/);
    assert.match(text, /"password_hash":"\$2b\$/);
    const other = await s.createTenant(`localhost:${s.port}`);
    const otherApi = v1(s, other.platformApiKey, `localhost:${s.port}`);
    const job = await importFile(otherApi, { format: 'jsonl', data: text });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual([job.counts.created, job.counts.rejected, job.counts.organizations_created, job.counts.memberships], [3, 0, 1, 1]);
    assert.equal(job.counts.skipped, 3, 'header, client and resource server lines are skipped');
    const browser = () => new Browser(s.port, `localhost:${s.port}`);
    for (const [email, password] of [
      ['ada@example.com', 'ada password 1'],
      ['bob@example.com', 'bob password 2'],
      ['carol@example.com', 'carol password 3'],
    ]) {
      assert.equal((await signIn(browser(), '/login', email!, 'wrong password')).status, 401, email);
      assert.equal((await signIn(browser(), '/login', email!, password)).status, 303, email);
      assert.match((await storedHash(s, other.tenant.id, email!))!, /^\$argon2id\$/);
    }
    // Importing the same export again changes nothing but updates.
    const again = await importFile(otherApi, { format: 'jsonl', data: text });
    assert.deepEqual([again.counts.created, again.counts.updated, again.counts.organizations_created], [0, 3, 0]);
    const orgs = (await otherApi('GET', '/organizations')).json().data;
    assert.equal(orgs.length, 1);
  });
});
