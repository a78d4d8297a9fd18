import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Migrator } from 'kysely';
import { PERMISSIONS } from '../../src/management/permissions.js';
import { migrate, openDatabase } from '../../src/storage/db.js';
import { FIRST_CATALOGUE } from '../../src/storage/migrations/0022_full_keys_new_permissions.js';
import { migrationProvider } from '../../src/storage/migrations/index.js';
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
        id, tenant_id: 'ten_1', organization_id: null, name: id, scopes: JSON.stringify(scopes), key_hash: `h_${id}`, key_prefix: 'sk_live_', created_at: 0, last_used_at: null, revoked_at: revokedAt,
      });
      await k.insertInto('api_keys').values([
        key('full', FIRST_CATALOGUE),
        key('narrow', ['users:read', 'events:read']),
        key('directory', ['directory:write', 'members:read']),
        key('revoked', FIRST_CATALOGUE, 5),
      ]).execute();

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
