import type { Kysely } from 'kysely';

// Reading a directory's connections, users and groups needed `directory:write` until the
// `directory:read` permission existed. Every live key that holds `directory:write` also gets
// `directory:read`, so nothing it could read before is refused after the upgrade (a key that held
// every permission keeps holding every permission).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const keys = (await db.selectFrom('api_keys').select(['id', 'scopes']).where('revoked_at', 'is', null).execute()) as { id: string; scopes: string }[];
  for (const key of keys) {
    const scopes = JSON.parse(key.scopes) as string[];
    if (!scopes.includes('directory:write') || scopes.includes('directory:read')) continue;
    await db
      .updateTable('api_keys')
      .set({ scopes: JSON.stringify([...scopes, 'directory:read']) })
      .where('id', '=', key.id)
      .execute();
  }
}

// The grant is not taken back: a key may have been given the permission since.
export async function down(): Promise<void> {}
