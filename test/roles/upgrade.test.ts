import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Migrator } from 'kysely';
import { grantsOf } from '../../src/management/roles/service.js';
import { PERMISSIONS } from '../../src/management/permissions.js';
import { migrate, openDatabase } from '../../src/storage/db.js';
import { CATALOGUE_BEFORE_ROLES } from '../../src/storage/migrations/0038_organization_roles.js';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { repos } from '../../src/storage/repos/index.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/db.js';

describe('upgrading to organizations roles (0038)', () => {
  it('admin and member become tenant-wide roles; every member keeps their role (as roles: [role]); full platform keys gain roles:*', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-upgrade-'));
    const pg = onPostgres ? await freshPostgresDatabase() : undefined;
    const db = openDatabase({ dataDir, databaseUrl: pg?.url });
    try {
      const migrator = new Migrator({ db: db.kysely, provider: migrationProvider });
      assert.equal((await migrator.migrateTo('0034_signin_engine_flows')).error, undefined);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const k = db.kysely as any;
      await k.insertInto('tenants').values({ id: 'ten_1', host: 'a.example', issuer: 'https://a.example', created_at: 0 }).execute();
      await k
        .insertInto('organizations')
        .values({
          id: 'org_1',
          tenant_id: 'ten_1',
          name: 'One',
          slug: null,
          domain: null,
          did: null,
          status: 'active',
          created_at: 0,
          updated_at: 0,
          sso_required: 0,
        })
        .execute();
      const user = (id: string) => ({
        id,
        tenant_id: 'ten_1',
        email: `${id}@a.example`,
        name: null,
        email_verified: 1,
        password_hash: null,
        created_at: 0,
        updated_at: 0,
      });
      await k
        .insertInto('users')
        .values([user('user_a'), user('user_m')])
        .execute();
      const member = (userId: string, role: string) => ({ tenant_id: 'ten_1', organization_id: 'org_1', user_id: userId, role, created_at: 0, updated_at: 0 });
      await k
        .insertInto('members')
        .values([member('user_a', 'admin'), member('user_m', 'member')])
        .execute();
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
        .values([key('full', CATALOGUE_BEFORE_ROLES), key('narrow', ['members:write']), key('org', CATALOGUE_BEFORE_ROLES, 'org_1')])
        .execute();

      await migrate(db);

      const r = repos(db.kysely, db.dialect);
      const roles = await r.roles.list('ten_1', null, undefined, 10);
      assert.deepEqual(
        roles.map((x) => [x.key, x.organizationId, x.permissions]),
        [
          ['admin', null, []],
          ['member', null, []],
        ],
      );
      const admin = await r.members.find('ten_1', 'org_1', 'user_a');
      assert.deepEqual([admin?.role, admin?.roles], ['admin', ['admin']]);
      const m = await r.members.find('ten_1', 'org_1', 'user_m');
      assert.deepEqual([m?.role, m?.roles], ['member', ['member']]);
      assert.deepEqual((await grantsOf(r, 'ten_1', 'org_1', 'user_a'))?.roles, ['admin'], 'the member still signs in to the organization with their role');
      assert.equal(await r.roles.defaultRole('ten_1'), 'member');

      const rows = (await k.selectFrom('api_keys').select(['id', 'scopes']).orderBy('id').execute()) as { id: string; scopes: string }[];
      const scopes = Object.fromEntries(rows.map((x) => [x.id, JSON.parse(x.scopes) as string[]]));
      assert.deepEqual([...(scopes.full ?? [])].sort(), [...PERMISSIONS].sort());
      assert.deepEqual(scopes.narrow, ['members:write']);
      assert.deepEqual(scopes.org, CATALOGUE_BEFORE_ROLES, 'organization keys are not widened');
    } finally {
      await db.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
