import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Migrator } from 'kysely';
import { PERMISSIONS } from '../../src/management/permissions.js';
import { migrate, openDatabase } from '../../src/storage/db.js';
import { FIRST_CATALOGUE } from '../../src/storage/migrations/0022_full_keys_new_permissions.js';
import { CATALOGUE_BEFORE_DOMAINS_VERIFY } from '../../src/storage/migrations/0027_federated_trust.js';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { repos } from '../../src/storage/repos/index.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/db.js';

describe('upgrading an installation of the first wave', () => {
  it('a key that held every permission then holds every permission now; a directory:write key gains directory:read; other narrower and revoked keys are untouched', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-upgrade-'));
    const pg = onPostgres ? await freshPostgresDatabase() : undefined;
    const db = openDatabase({ dataDir, databaseUrl: pg?.url });
    try {
      const migrator = new Migrator({ db: db.kysely, provider: migrationProvider });
      const { error } = await migrator.migrateTo('0017_sso');
      assert.equal(error, undefined);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const k = db.kysely as any;
      await k.insertInto('tenants').values({ id: 'ten_1', host: 'a.example', issuer: 'https://a.example', created_at: 0 }).execute();
      const key = (id: string, scopes: string[], revokedAt: number | null = null) => ({
        id,
        tenant_id: 'ten_1',
        organization_id: null,
        name: id,
        scopes: JSON.stringify(scopes),
        key_hash: `h_${id}`,
        key_prefix: 'sk_live_',
        created_at: 0,
        last_used_at: null,
        revoked_at: revokedAt,
      });
      await k
        .insertInto('api_keys')
        .values([
          key('full', FIRST_CATALOGUE),
          key('narrow', ['users:read', 'events:read']),
          key('directory', ['directory:write', 'members:read']),
          key('revoked', FIRST_CATALOGUE, 5),
        ])
        .execute();

      await migrate(db);

      const rows = (await k.selectFrom('api_keys').select(['id', 'scopes']).orderBy('id').execute()) as { id: string; scopes: string }[];
      const scopes = Object.fromEntries(rows.map((r) => [r.id, JSON.parse(r.scopes) as string[]]));
      assert.deepEqual([...(scopes.full ?? [])].sort(), [...PERMISSIONS].sort(), 'the full key holds the whole current catalogue');
      assert.deepEqual(scopes.narrow, ['users:read', 'events:read']);
      assert.deepEqual(scopes.directory, ['directory:write', 'members:read', 'directory:read'], 'what directory:write could read, directory:read now reads');
      assert.deepEqual(scopes.revoked, FIRST_CATALOGUE);
    } finally {
      await db.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('upgrading to the federated trust boundaries (0027)', () => {
  it('full keys gain domains:verify; a domain a narrower key verified manually must be proved again; SSO-created users outside a proved domain lose email_verified', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-upgrade-'));
    const pg = onPostgres ? await freshPostgresDatabase() : undefined;
    const db = openDatabase({ dataDir, databaseUrl: pg?.url });
    try {
      const migrator = new Migrator({ db: db.kysely, provider: migrationProvider });
      assert.equal((await migrator.migrateTo('0026_user_password_set_by')).error, undefined);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const k = db.kysely as any;
      await k.insertInto('tenants').values({ id: 'ten_1', host: 'a.example', issuer: 'https://a.example', created_at: 0 }).execute();
      const key = (id: string, scopes: string[], organizationId: string | null = null) => ({
        id,
        tenant_id: 'ten_1',
        organization_id: organizationId,
        name: id,
        scopes: JSON.stringify(scopes),
        key_hash: `h_${id}`,
        key_prefix: 'sk_live_',
        created_at: 0,
        last_used_at: null,
        revoked_at: null,
      });
      await k
        .insertInto('api_keys')
        .values([key('full', CATALOGUE_BEFORE_DOMAINS_VERIFY), key('narrow', ['organizations:write', 'sso:write'])])
        .execute();
      const org = (id: string, domain: string) => ({
        id,
        tenant_id: 'ten_1',
        name: id,
        slug: null,
        domain,
        did: null,
        status: 'active',
        created_at: 0,
        updated_at: 0,
        domain_verified_at: 1,
        sso_required: 0,
      });
      await k
        .insertInto('organizations')
        .values([org('org_narrow', 'evil.test'), org('org_full', 'good.test'), org('org_dns', 'dns.test')])
        .execute();
      let seq = 0;
      const event = (type: string, organizationId: string | null, actor: [string, string | null], data: Record<string, unknown>) => ({
        id: `evt_${++seq}`,
        tenant_id: 'ten_1',
        seq,
        type,
        organization_id: organizationId,
        actor_type: actor[0],
        actor_id: actor[1],
        data: JSON.stringify(data),
        created_at: seq,
      });
      await k
        .insertInto('events')
        .values([
          event('organization.domain_verified', 'org_narrow', ['api_key', 'narrow'], { method: 'manual' }),
          event('organization.domain_verified', 'org_full', ['api_key', 'full'], { method: 'manual' }),
          event('organization.domain_verified', 'org_dns', ['api_key', 'narrow'], { method: 'dns' }),
        ])
        .execute();
      const conn = (id: string, organizationId: string) => ({
        id,
        tenant_id: 'ten_1',
        organization_id: organizationId,
        protocol: 'oidc',
        name: id,
        enabled: 1,
        default_role: 'member',
        group_roles: '{}',
        config: '{}',
        secret_enc: null,
        created_at: 0,
        updated_at: 0,
      });
      await k
        .insertInto('sso_connections')
        .values([conn('sso_good', 'org_full'), conn('sso_evil', 'org_narrow')])
        .execute();
      const user = (id: string, email: string) => ({
        id,
        tenant_id: 'ten_1',
        email,
        name: null,
        email_verified: 1,
        password_hash: null,
        created_at: 0,
        updated_at: 0,
      });
      await k
        .insertInto('users')
        .values([user('user_in', 'a@good.test'), user('user_out', 'ceo@bank.test'), user('user_evil', 'b@evil.test'), user('user_api', 'c@elsewhere.test')])
        .execute();
      await k
        .insertInto('events')
        .values([
          event('user.created', null, ['system', 'sso_good'], { user_id: 'user_in' }),
          event('user.created', null, ['system', 'sso_good'], { user_id: 'user_out' }),
          event('user.created', null, ['system', 'sso_evil'], { user_id: 'user_evil' }),
          event('user.created', null, ['api_key', 'full'], { user_id: 'user_api' }),
        ])
        .execute();

      await migrate(db);

      const scopes = Object.fromEntries(
        ((await k.selectFrom('api_keys').select(['id', 'scopes']).execute()) as { id: string; scopes: string }[]).map((r) => [
          r.id,
          JSON.parse(r.scopes) as string[],
        ]),
      );
      assert.ok(scopes.full!.includes('domains:verify'));
      assert.ok(!scopes.narrow!.includes('domains:verify'));
      const verified = Object.fromEntries(
        ((await k.selectFrom('organizations').select(['id', 'domain_verified_at']).execute()) as { id: string; domain_verified_at: unknown }[]).map((r) => [
          r.id,
          r.domain_verified_at !== null,
        ]),
      );
      assert.deepEqual(verified, { org_narrow: false, org_full: true, org_dns: true });
      const emailVerified = Object.fromEntries(
        ((await k.selectFrom('users').select(['id', 'email_verified']).execute()) as { id: string; email_verified: unknown }[]).map((r) => [
          r.id,
          Number(r.email_verified),
        ]),
      );
      assert.deepEqual(emailVerified, { user_in: 1, user_out: 0, user_evil: 0, user_api: 1 });
    } finally {
      await db.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('upgrading to one store of upstream round trips (0031)', () => {
  it('live SSO states and connect flows move to upstream_round_trips, still bound to their browser; finished and expired ones do not; the old tables are gone', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-upgrade-'));
    const pg = onPostgres ? await freshPostgresDatabase() : undefined;
    const db = openDatabase({ dataDir, databaseUrl: pg?.url });
    try {
      const migrator = new Migrator({ db: db.kysely, provider: migrationProvider });
      assert.equal((await migrator.migrateTo('0030_passkey_disabled')).error, undefined);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const k = db.kysely as any;
      const live = Date.now() + 600_000;
      await k.insertInto('tenants').values({ id: 'ten_1', host: 'a.example', issuer: 'https://a.example', created_at: 0 }).execute();
      await k
        .insertInto('organizations')
        .values({
          id: 'org_1',
          tenant_id: 'ten_1',
          name: 'Acme',
          slug: null,
          domain: null,
          did: null,
          status: 'active',
          created_at: 0,
          updated_at: 0,
          domain_verified_at: null,
          sso_required: 0,
        })
        .execute();
      await k
        .insertInto('sso_connections')
        .values({
          id: 'sso_1',
          tenant_id: 'ten_1',
          organization_id: 'org_1',
          protocol: 'oidc',
          name: 'IdP',
          enabled: 1,
          default_role: 'member',
          group_roles: '{}',
          config: '{}',
          secret_enc: null,
          created_at: 0,
          updated_at: 0,
        })
        .execute();
      await k
        .insertInto('connect_providers')
        .values({
          id: 'cpr_1',
          tenant_id: 'ten_1',
          name: 'Up',
          preset: null,
          kind: 'oauth2',
          issuer: null,
          authorization_endpoint: 'https://up.example/a',
          token_endpoint: 'https://up.example/t',
          revocation_endpoint: null,
          client_id: 'c',
          client_secret_enc: null,
          token_endpoint_auth_method: 'none',
          scope: 'read write',
          pkce: 1,
          authorize_params: '{}',
          iss_parameter_supported: 0,
          created_at: 0,
          updated_at: 0,
        })
        .execute();
      const state = (hash: string, expiresAt: number, consumedAt: number | null = null) => ({
        state_hash: hash,
        tenant_id: 'ten_1',
        connection_id: 'sso_1',
        browser_hash: `browser_${hash}`,
        secrets_enc: `sealed_${hash}`,
        created_at: 1,
        expires_at: expiresAt,
        consumed_at: consumedAt,
      });
      await k
        .insertInto('sso_login_states')
        .values([state('s_live', live), state('s_used', live, 5), state('s_old', 10)])
        .execute();
      const flow = (hash: string, expiresAt: number, consumedAt: number | null = null) => ({
        state_hash: hash,
        tenant_id: 'ten_1',
        provider_id: 'cpr_1',
        user_id: 'user_1',
        session_id: 'ses_1',
        organization_id: 'org_1',
        verifier_enc: `sealed_${hash}`,
        scope: 'read write',
        expires_at: expiresAt,
        consumed_at: consumedAt,
        created_at: 2,
      });
      await k
        .insertInto('connect_flows')
        .values([flow('c_live', live), flow('c_used', live, 5), flow('c_old', 10)])
        .execute();

      await migrate(db);

      const rows = (await k.selectFrom('upstream_round_trips').selectAll().orderBy('state_hash').execute()) as Record<string, unknown>[];
      assert.deepEqual(
        rows.map((r) => ({ ...r, created_at: Number(r.created_at), expires_at: Number(r.expires_at) })),
        [
          {
            state_hash: 'c_live',
            tenant_id: 'ten_1',
            purpose: 'connect',
            upstream_id: 'cpr_1',
            browser_hash: createHash('sha256').update('ses_1').digest('hex'),
            secrets_enc: 'sealed_c_live',
            resume: JSON.stringify({ userId: 'user_1', organizationId: 'org_1', scopes: ['read', 'write'] }),
            created_at: 2,
            expires_at: live,
            consumed_at: null,
          },
          {
            state_hash: 's_live',
            tenant_id: 'ten_1',
            purpose: 'sso',
            upstream_id: 'sso_1',
            browser_hash: 'browser_s_live',
            secrets_enc: 'sealed_s_live',
            resume: null,
            created_at: 1,
            expires_at: live,
            consumed_at: null,
          },
        ],
      );
      const r = repos(db.kysely, db.dialect).upstreamRoundTrips;
      const moved = (await r.find('ten_1', 'sso', 's_live'))!;
      assert.equal(await r.consume({ ...moved, browserHash: 'browser_other' }, Date.now()), false, 'another browser cannot consume it');
      assert.equal(await r.consume(moved, Date.now()), true);
      assert.equal(await r.consume(moved, Date.now()), false, 'single use');
      for (const gone of ['sso_login_states', 'connect_flows']) {
        await assert.rejects(k.selectFrom(gone).selectAll().execute(), `${gone} is dropped`);
      }
    } finally {
      await db.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
