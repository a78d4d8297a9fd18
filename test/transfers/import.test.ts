import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { repos } from '../../src/storage/repos/index.js';
import { newId } from '../../src/kernel/ids.js';
import { expectError, v1, type Api } from '../helpers/v1.js';
import { signIn, startSigninServer, type SigninTestServer } from '../signin/helpers.js';
import { FIREBASE_HASH_CONFIG, finished, fixture, importFile, storedHash } from './helpers.js';

describe('user import through /v1/imports', () => {
  let s: SigninTestServer;
  let api: Api;
  let tenantId: string;
  before(async () => {
    s = await startSigninServer();
    api = v1(s, s.tenant.platformApiKey);
    tenantId = s.tenant.tenant.id;
  });
  after(() => s.close());

  /** Signs in through the hosted login with the original password; a wrong one fails; the hash is argon2id afterwards. */
  async function signsIn(email: string, password: string) {
    assert.equal((await signIn(s.browser(), '/login', email, `${password}x`)).status, 401, `${email}: a wrong password fails`);
    assert.ok(!(await storedHash(s, tenantId, email))!.startsWith('$argon2id$'), `${email}: still the imported hash`);
    assert.equal((await signIn(s.browser(), '/login', email, password)).status, 303, `${email} signs in with the original password`);
    assert.match((await storedHash(s, tenantId, email))!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, `${email}: argon2id after the sign-in`);
    assert.equal((await signIn(s.browser(), '/login', email, password)).status, 303, `${email} signs in again on the new hash`);
  }

  it('auth0 (bcrypt $2a/$2b/$2y made by bcryptjs): users sign in with their passwords and are rehashed, with user.password_rehashed', async () => {
    const job = await importFile(api, { format: 'auth0', data: fixture('auth0.ndjson') });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual([job.counts.rows, job.counts.created, job.counts.rejected], [3, 3, 0]);
    for (const v of ['2b', '2a', '2y']) await signsIn(`bcrypt-${v}@example.com`, `auth0 password ${v}`);
    const [u] = await s.server.ctx.management.users.list(tenantId, undefined, 1, 'bcrypt-2b@example.com');
    assert.equal(u!.emailVerified, true);
    const events = (await api('GET', '/events?types=user.password_rehashed&limit=100')).json().data;
    const mine = events.find((e: { data: { user_id: string } }) => e.data.user_id === u!.id);
    assert.deepEqual(mine?.data, { user_id: u!.id, from: 'bcrypt', to: 'argon2id' });
    assert.ok(!JSON.stringify(events).includes('$2'), 'no hash in an event');
  });

  it("firebase (the documented scrypt vector) with the project's hash_config; a user without a password cannot sign in", async () => {
    const job = await importFile(api, { format: 'firebase', data: fixture('firebase.json'), hash_config: FIREBASE_HASH_CONFIG });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual([job.counts.created, job.counts.rejected], [2, 0]);
    await signsIn('user1@example.com', 'user1password');
    assert.equal(await storedHash(s, tenantId, 'google-only@example.com'), null);
    assert.equal((await signIn(s.browser(), '/login', 'google-only@example.com', 'anything at all')).status, 401);
  });

  it('firebase without hash_config rejects the rows with a password (hash_config_missing) and imports the rest', async () => {
    const job = await importFile(api, {
      format: 'firebase',
      source: 'firebase-b',
      data: fixture('firebase.json').replaceAll('@example.com', '@b.example.com'),
    });
    assert.equal(job.counts.rejected, 1);
    const report = (await api('GET', `/imports/${job.id}/report`)).json();
    assert.deepEqual(
      report.rejected.map((r: { reason: string }) => r.reason),
      ['hash_config_missing'],
    );
    assert.equal(report.rejected[0].email, 'user1@b.example.com');
  });

  it('keycloak realm export (PBKDF2-SHA1/256/512 credentials)', async () => {
    const job = await importFile(api, { format: 'keycloak', data: fixture('keycloak-realm.json') });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.counts.created, 3);
    await signsIn('kc-sha256@example.com', 'keycloak sha256 password');
    await signsIn('kc-sha1@example.com', 'keycloak sha1 password');
    await signsIn('kc-sha512@example.com', 'keycloak sha512 password');
    const [u] = await s.server.ctx.management.users.list(tenantId, undefined, 1, 'kc-sha1@example.com');
    assert.equal(u!.name, 'Key Cloak');
  });

  it("jsonl: Django's pbkdf2_sha256, argon2i, scrypt, legacy salted SHA behind allow_legacy_sha; organizations and memberships with roles", async () => {
    const refused = await importFile(api, {
      format: 'jsonl',
      source: 'no-legacy',
      data: fixture('keyhall.jsonl').replaceAll('@example.com', '@nolegacy.example.com').replace('"slug":"acme"', '"slug":"acme-nolegacy"'),
    });
    const reasons = (await api('GET', `/imports/${refused.id}/report`)).json().rejected.map((r: { reason: string }) => r.reason);
    assert.deepEqual(reasons, ['legacy_hash_not_allowed', 'legacy_hash_not_allowed']);

    const job = await importFile(api, { format: 'jsonl', data: fixture('keyhall.jsonl'), allow_legacy_sha: true });
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual([job.counts.created, job.counts.rejected, job.counts.organizations_created, job.counts.memberships], [5, 0, 1, 2]);
    await signsIn('django@example.com', 'lètmein');
    await signsIn('argon2i@example.com', 'argon2i password');
    await signsIn('scrypt@example.com', 'password');
    await signsIn('sha256@example.com', 'legacy sha256 password');
    await signsIn('sha512@example.com', 'legacy sha512 password');

    const orgs = (await api('GET', '/organizations?limit=100')).json().data.filter((o: { slug: string }) => o.slug === 'acme');
    assert.equal(orgs.length, 1);
    const members = (await api('GET', `/organizations/${orgs[0].id}/members`)).json().data;
    const roles = Object.fromEntries(members.map((m: { user: { email: string }; role: string }) => [m.user.email, m.role]));
    assert.deepEqual(roles, { 'django@example.com': 'admin', 'argon2i@example.com': 'member' });
  });

  it('cognito CSV (no passwords) and Keyhall CSV with bcrypt', async () => {
    const cognito = await importFile(api, { format: 'cognito', data: fixture('cognito.csv') });
    assert.deepEqual([cognito.counts.created, cognito.counts.rejected], [2, 0]);
    const [dan] = await s.server.ctx.management.users.list(tenantId, undefined, 1, 'dan@example.com');
    assert.equal(dan!.name, 'Dan "D" Doe');
    assert.equal(dan!.passwordHash, null);

    const { default: bcrypt } = await import('bcryptjs');
    const csv = `external_id,email,email_verified,name,password_hash\ncsv-1,csv@example.com,true,"Csv, User",${bcrypt.hashSync('csv password', 4)}\n`;
    const job = await importFile(api, { format: 'csv', data: csv });
    assert.equal(job.counts.created, 1, JSON.stringify(job));
    await signsIn('csv@example.com', 'csv password');
  });

  it('malformed rows get per-row reasons (bad JSON, unknown hash, duplicate email, huge line, invalid UTF-8) and the good rows are imported', async () => {
    const lines = [
      JSON.stringify({ id: 'm-1', email: 'good1@malformed.test' }),
      '{"id": "m-2", "email": ',
      JSON.stringify({ id: 'm-3', email: 'md5@malformed.test', password_hash: '5f4dcc3b5aa765d61d8327deb882cf99' }),
      JSON.stringify({ id: 'm-4', email: 'GOOD1@malformed.test' }),
      JSON.stringify({ id: 'm-5', email: 'huge@malformed.test', name: 'x'.repeat(70_000) }),
      'INVALID_UTF8',
      JSON.stringify({ id: 'm-7', email: 'not-an-email' }),
      JSON.stringify({ email: 'noid@malformed.test' }),
      JSON.stringify({ id: 'm-9', email: 'good2@malformed.test', organizations: [{ id: 'x', role: 'owner' }] }),
      JSON.stringify({ id: 'm-10', email: 'good3@malformed.test' }),
    ];
    const bytes = Buffer.from(lines.join('\n'), 'utf8');
    const at = bytes.indexOf('INVALID_UTF8');
    const data = Buffer.concat([bytes.subarray(0, at), Buffer.from([0x7b, 0xc3, 0x28, 0xff, 0x7d]), bytes.subarray(at + 'INVALID_UTF8'.length)]);
    const job = await importFile(api, { format: 'jsonl', source: 'malformed', data_base64: data.toString('base64') });
    assert.equal(job.status, 'succeeded');
    assert.deepEqual([job.counts.rows, job.counts.created, job.counts.rejected], [10, 2, 8]);
    const report = await api('GET', `/imports/${job.id}/report`);
    assert.equal(report.status, 200);
    const byRow = Object.fromEntries(report.json().rejected.map((r: { row: number; reason: string }) => [r.row, r.reason]));
    assert.deepEqual(byRow, {
      2: 'invalid_json',
      3: 'unknown_hash_format',
      4: 'duplicate_email',
      5: 'line_too_long',
      6: 'invalid_utf8',
      7: 'invalid_email',
      8: 'missing_external_id',
      9: 'invalid_role',
    });
    assert.ok(!report.text.includes('5f4dcc3b'), 'the report never echoes a hash');
    assert.ok((await storedHash(s, tenantId, 'good3@malformed.test')) === null);
  });

  it('is idempotent by external id: a re-run updates and never duplicates; a dry run writes nothing', async () => {
    const before = await s.server.ctx.management.users.list(tenantId, undefined, 100);
    const changed = fixture('auth0.ndjson').replace('"email_verified":true', '"email_verified":false');
    const again = await importFile(api, { format: 'auth0', data: changed });
    assert.deepEqual([again.counts.created, again.counts.updated, again.counts.rejected], [0, 3, 0]);
    const afterRun = await s.server.ctx.management.users.list(tenantId, undefined, 100);
    assert.equal(afterRun.length, before.length);
    const [u] = await s.server.ctx.management.users.list(tenantId, undefined, 1, 'bcrypt-2b@example.com');
    assert.equal(u!.emailVerified, false);
    // The imported hash came back with the re-run: it verifies again and is replaced again.
    await signsIn('bcrypt-2b@example.com', 'auth0 password 2b');

    const dry = await importFile(api, {
      format: 'auth0',
      source: 'dry',
      dry_run: true,
      data: fixture('auth0.ndjson').replaceAll('@example.com', '@dry.example.com'),
    });
    assert.equal(dry.dry_run, true);
    assert.deepEqual([dry.counts.created, dry.counts.rejected], [3, 0]);
    assert.equal((await s.server.ctx.management.users.list(tenantId, undefined, 1, 'bcrypt-2b@dry.example.com')).length, 0);
  });

  it('a row that conflicts inside a batch (a slug already taken) is rejected alone; the rest of its batch is imported', async () => {
    assert.equal((await api('POST', '/organizations', { name: 'Taken', slug: 'taken' })).status, 201);
    const data = [
      JSON.stringify({ id: 'c-1', email: 'c1@conflict.test' }),
      JSON.stringify({ type: 'organization', id: 'other', name: 'Other', slug: 'taken' }),
      JSON.stringify({ id: 'c-2', email: 'c2@conflict.test' }),
    ].join('\n');
    const job = await importFile(api, { format: 'jsonl', source: 'conflict', data });
    assert.deepEqual([job.counts.created, job.counts.rejected, job.counts.organizations_created], [2, 1, 0]);
    const report = (await api('GET', `/imports/${job.id}/report`)).json().rejected;
    assert.deepEqual(
      report.map((r: { row: number; reason: string }) => [r.row, r.reason]),
      [[2, 'conflict']],
    );
    assert.equal((await s.server.ctx.management.users.list(tenantId, undefined, 1, 'c2@conflict.test')).length, 1);
  });

  it("a key without every permission cannot change an imported tenant administrator's password by importing again", async () => {
    const { default: bcrypt } = await import('bcryptjs');
    const line = (pw: string) => JSON.stringify({ id: 'adm-1', email: 'imported-admin@example.com', password_hash: bcrypt.hashSync(pw, 4) });
    assert.equal((await importFile(api, { format: 'jsonl', source: 'admins', data: line('first password') })).counts.created, 1);
    await s.server.ctx.admins.grant(tenantId, 'imported-admin@example.com');
    const narrow = await s.server.ctx.management.apiKeys.createAsOperator(tenantId, null, { name: 'importer', scopes: ['imports:write'] });
    const job = await importFile(v1(s, narrow.key), { format: 'jsonl', source: 'admins', data: line('attacker password') });
    assert.deepEqual([job.counts.updated, job.counts.rejected], [0, 1]);
    const report = (await v1(s, narrow.key)('GET', `/imports/${job.id}/report`)).json().rejected;
    assert.equal(report[0].reason, 'insufficient_scope');
    assert.equal((await signIn(s.browser(), '/login', 'imported-admin@example.com', 'attacker password')).status, 401);
    // A key holding every permission may.
    const full = await importFile(api, { format: 'jsonl', source: 'admins', data: line('new password') });
    assert.deepEqual([full.counts.updated, full.counts.rejected], [1, 0]);
    assert.equal((await signIn(s.browser(), '/login', 'imported-admin@example.com', 'new password')).status, 303);
  });

  it('a whole-document file that is not JSON fails the job with its reason', async () => {
    const job = await importFile(api, { format: 'keycloak', data: '{"users": [' });
    assert.equal(job.status, 'failed');
    assert.match(job.error, /^invalid_json/);
  });

  it('a running job whose process died (no heartbeat) reads as failed: interrupted', async () => {
    const now = Date.now();
    const id = newId('imp', now);
    await repos(s.server.ctx.db.kysely, s.server.ctx.db.dialect).transferJobs.insert(
      {
        id,
        tenantId,
        kind: 'import',
        status: 'running',
        format: 'jsonl',
        dryRun: false,
        includeSecrets: false,
        counts: { rows: 10 },
        report: [],
        error: null,
        outputEnc: null,
        actor: { type: 'system', id: null },
        createdAt: now - 10 * 60_000,
        heartbeatAt: now - 3 * 60_000,
        finishedAt: null,
      },
      0,
    );
    const job = await finished(api, `/imports/${id}`);
    assert.equal(job.status, 'failed');
    assert.equal(job.error, 'interrupted');
  });

  it('refusals: bad bodies 400 invalid_request, no key 401, a key without imports:write 403 insufficient_scope, unknown job 404', async () => {
    expectError(await api('POST', '/imports', { format: 'ldif', data: 'x' }), 400, 'invalid_request');
    expectError(await api('POST', '/imports', { format: 'jsonl' }), 400, 'invalid_request');
    expectError(await api('POST', '/imports', { format: 'jsonl', data: 'x', data_base64: 'eA==' }), 400, 'invalid_request');
    expectError(await api('POST', '/imports', { format: 'firebase', data: '{}', hash_config: { ...FIREBASE_HASH_CONFIG, rounds: 0 } }), 400, 'invalid_request');
    expectError(await api('POST', '/imports', '{"format": "jsonl", "data": '), 400, 'invalid_request');
    expectError(await v1(s, undefined)('POST', '/imports', { format: 'jsonl', data: 'x' }), 401, 'invalid_token');
    const narrow = await s.server.ctx.management.apiKeys.createAsOperator(tenantId, null, { name: 'users only', scopes: ['users:read', 'users:write'] });
    expectError(await v1(s, narrow.key)('POST', '/imports', { format: 'jsonl', data: 'x' }), 403, 'insufficient_scope');
    expectError(await api('GET', `/imports/${newId('imp')}`), 404, 'not_found');
    expectError(await api('GET', `/imports/${newId('imp')}/report`), 404, 'not_found');
    expectError(await api('GET', '/imports/usr_1'), 404, 'not_found');
  });
});
