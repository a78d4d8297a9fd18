import type { Kysely } from 'kysely';

// API keys that held every permission of the first catalogue (the tenant's platform key above
// all) keep holding every permission: the second wave added these, and without this an upgraded
// installation's platform key could not reach the new routes (docs/permissions.md, "Upgrades").
// Both lists are frozen here: a later release that adds permissions ships its own migration.
export const FIRST_CATALOGUE = [
  'organizations:read',
  'organizations:write',
  'users:read',
  'users:write',
  'members:read',
  'members:write',
  'api_keys:read',
  'api_keys:write',
  'clients:read',
  'clients:write',
  'webhooks:read',
  'webhooks:write',
  'directory:write',
  'connected_accounts:read',
  'connected_accounts:token',
  'webauthn_policy:write',
  'credentials:issue',
  'credentials:read',
  'credentials:revoke',
  'events:read',
];
const ADDED = [
  'resource_servers:read',
  'resource_servers:write',
  'connect_providers:read',
  'connect_providers:write',
  'sso:read',
  'sso:write',
  'connected_accounts:write',
  'webauthn_policy:read',
  'mfa_policy:read',
  'mfa_policy:write',
  'clients:register',
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const keys = (await db.selectFrom('api_keys').select(['id', 'scopes']).where('revoked_at', 'is', null).execute()) as { id: string; scopes: string }[];
  for (const key of keys) {
    const scopes = JSON.parse(key.scopes) as string[];
    if (!FIRST_CATALOGUE.every((p) => scopes.includes(p))) continue;
    const missing = ADDED.filter((p) => !scopes.includes(p));
    if (missing.length === 0) continue;
    await db
      .updateTable('api_keys')
      .set({ scopes: JSON.stringify([...scopes, ...missing]) })
      .where('id', '=', key.id)
      .execute();
  }
}

// The grant is not taken back: a key may have been given these permissions since.
export async function down(): Promise<void> {}
