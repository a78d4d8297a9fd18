import type { Kysely } from 'kysely';

// Federated identity trust boundaries (docs/sso.md, "Trust boundaries"):
// 1. `domains:verify` is the permission of manual domain verification. Every live platform key
//    that held the whole catalogue before it existed gets it (docs/permissions.md, "Upgrades").
// 2. A domain verified manually by an actor that did not hold every permission (an org-bound key,
//    or a narrower platform key) was taken on an under-privileged word: its verification is
//    cleared, so it routes and links nothing until proved again (DNS, or a full-privilege actor).
// 3. `sso_connections.trust_idp_mfa`: whether the IdP's own MFA statement counts (default no).
// 4. Users an SSO connection created were stored `email_verified` whatever the domain: those
//    whose email is not in a domain the connection's organization has verified are corrected.
// The catalogue is frozen here: a later release that adds permissions ships its own migration.
export const CATALOGUE_BEFORE_DOMAINS_VERIFY = [
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
  'clients:register',
  'resource_servers:read',
  'resource_servers:write',
  'webhooks:read',
  'webhooks:write',
  'directory:read',
  'directory:write',
  'connect_providers:read',
  'connect_providers:write',
  'sso:read',
  'sso:write',
  'connected_accounts:read',
  'connected_accounts:write',
  'connected_accounts:token',
  'webauthn_policy:read',
  'webauthn_policy:write',
  'mfa_policy:read',
  'mfa_policy:write',
  'credentials:issue',
  'credentials:read',
  'credentials:revoke',
  'events:read',
];

type KeyRow = { id: string; scopes: string; organization_id: string | null; revoked_at: number | null };

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Revoked keys count when judging who verified a domain, but gain nothing.
  const keys = (await db.selectFrom('api_keys').select(['id', 'scopes', 'organization_id', 'revoked_at']).execute()) as KeyRow[];
  const full = new Set<string>();
  for (const key of keys) {
    const scopes = JSON.parse(key.scopes) as string[];
    if (key.organization_id !== null || !CATALOGUE_BEFORE_DOMAINS_VERIFY.every((p) => scopes.includes(p))) continue;
    full.add(key.id);
    if (key.revoked_at === null && !scopes.includes('domains:verify'))
      await db
        .updateTable('api_keys')
        .set({ scopes: JSON.stringify([...scopes, 'domains:verify']) })
        .where('id', '=', key.id)
        .execute();
  }

  // The latest verification event of each verified organization says how and by whom.
  const verified = (await db.selectFrom('organizations').select(['id', 'tenant_id', 'domain']).where('domain_verified_at', 'is not', null).execute()) as {
    id: string;
    tenant_id: string;
    domain: string | null;
  }[];
  for (const org of verified) {
    const last = (await db
      .selectFrom('events')
      .select(['actor_type', 'actor_id', 'data'])
      .where('tenant_id', '=', org.tenant_id)
      .where('organization_id', '=', org.id)
      .where('type', '=', 'organization.domain_verified')
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst()) as { actor_type: string; actor_id: string | null; data: string } | undefined;
    if (!last) continue;
    const method = (JSON.parse(last.data) as { method?: string }).method;
    const fullActor =
      last.actor_type === 'user' || last.actor_type === 'system' || (last.actor_type === 'api_key' && last.actor_id !== null && full.has(last.actor_id));
    if (method === 'manual' && !fullActor) await db.updateTable('organizations').set({ domain_verified_at: null }).where('id', '=', org.id).execute();
  }

  await db.schema
    .alterTable('sso_connections')
    .addColumn('trust_idp_mfa', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  const created = (await db
    .selectFrom('events')
    .select(['tenant_id', 'actor_id', 'data'])
    .where('type', '=', 'user.created')
    .where('actor_type', '=', 'system')
    .where('actor_id', 'like', 'sso_%')
    .execute()) as { tenant_id: string; actor_id: string; data: string }[];
  for (const e of created) {
    const userId = (JSON.parse(e.data) as { user_id?: string }).user_id;
    if (!userId) continue;
    const user = (await db
      .selectFrom('users')
      .select(['email', 'email_verified'])
      .where('tenant_id', '=', e.tenant_id)
      .where('id', '=', userId)
      .executeTakeFirst()) as { email: string; email_verified: number } | undefined;
    if (!user || Number(user.email_verified) !== 1) continue;
    const org = (await db
      .selectFrom('sso_connections')
      .innerJoin('organizations', 'organizations.id', 'sso_connections.organization_id')
      .select(['organizations.domain as domain', 'organizations.domain_verified_at as verified_at'])
      .where('sso_connections.id', '=', e.actor_id)
      .executeTakeFirst()) as { domain: string | null; verified_at: number | null } | undefined;
    const owned = org !== undefined && org.domain !== null && org.verified_at !== null && domainOf(user.email) === org.domain.toLowerCase();
    if (!owned) await db.updateTable('users').set({ email_verified: 0 }).where('tenant_id', '=', e.tenant_id).where('id', '=', userId).execute();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sso_connections').dropColumn('trust_idp_mfa').execute();
}
