import type { Kysely } from 'kysely';
import { bool, cast, codec, json, num } from '../codec.js';
import type { Database } from '../schema.js';

export type SocialKind = 'oidc' | 'oauth2';
export type AccountLinking = 'verified_email' | 'manual';

/** Where a provider's userinfo document keeps each attribute (field paths, src/upstream/profile.ts). */
export interface SocialProfilePaths {
  subject: string;
  email?: string;
  emailVerified?: string;
  name?: string;
  picture?: string;
}

/** The public settings of a social connection (the client secret is stored apart, sealed). */
export interface SocialConfig {
  /** The issuer (OIDC, checked in ID tokens and RFC 9207 `iss`); null for an OAuth 2.0 provider. */
  issuer: string | null;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string | null;
  /** OIDC: the upstream's keys for its ID tokens. */
  jwksUri: string | null;
  /** An endpoint listing the person's addresses in GitHub's `/user/emails` shape `[{email, primary, verified}]`. */
  emailsEndpoint: string | null;
  tokenAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  issParameterSupported: boolean;
  idTokenAlgs: string[];
  pkce: boolean;
  /** OAuth 2.0: where the userinfo document keeps each attribute; OIDC: the claims (sub, email, …). */
  profile: SocialProfilePaths;
  /** Extra authorization request parameters (a preset's; `response_mode: form_post` for Apple). */
  authorizeParams: Record<string, string>;
  /** Sign in with Apple: the client secret is a JWT signed with the sealed private key (src/social/apple.ts). */
  apple?: { teamId: string; keyId: string };
}

export interface SocialConnectionRecord {
  id: string;
  tenantId: string;
  name: string;
  kind: SocialKind;
  preset: string | null;
  clientId: string;
  secretEnc: string | null;
  config: SocialConfig;
  scopes: string[];
  signIn: boolean;
  signUp: boolean;
  displayOrder: number;
  /** The vault provider a sign-in's upstream tokens are kept under (docs/social.md), or null. */
  vaultProviderId: string | null;
  createdAt: number;
  updatedAt: number;
}

const connections = codec<SocialConnectionRecord>()('social_connections', {
  id: true,
  tenantId: true,
  name: true,
  kind: cast<SocialKind>(),
  preset: true,
  clientId: true,
  secretEnc: true,
  config: json<SocialConfig>(),
  scopes: json<string[]>(),
  signIn: bool,
  signUp: bool,
  displayOrder: num,
  vaultProviderId: true,
  createdAt: true,
  updatedAt: true,
});

const PATCHABLE = ['name', 'clientId', 'secretEnc', 'config', 'scopes', 'signIn', 'signUp', 'displayOrder', 'vaultProviderId'] as const;
export type SocialConnectionPatch = Partial<Pick<SocialConnectionRecord, (typeof PATCHABLE)[number]>>;

export class SocialConnectionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(c: SocialConnectionRecord): Promise<void> {
    await this.db.insertInto('social_connections').values(connections.toRow(c)).execute();
  }

  async find(tenantId: string, id: string): Promise<SocialConnectionRecord | undefined> {
    const row = await this.db
      .selectFrom('social_connections')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && connections.toRecord(row);
  }

  /** The tenant's connections in display order (then oldest first). */
  async list(tenantId: string, limit: number): Promise<SocialConnectionRecord[]> {
    const rows = await this.db
      .selectFrom('social_connections')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('display_order')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(connections.toRecord);
  }

  async update(tenantId: string, id: string, patch: SocialConnectionPatch, now: number): Promise<SocialConnectionRecord | undefined> {
    const row = await this.db
      .updateTable('social_connections')
      .set({ updated_at: now, ...connections.toPatch(patch, PATCHABLE) })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && connections.toRecord(row);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('social_connections')
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

/** An upstream identity linked to a user: what the upstream said, never a token. */
export interface SocialIdentityRecord {
  id: string;
  tenantId: string;
  connectionId: string;
  subject: string;
  userId: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
  linkedAt: number;
  lastLoginAt: number;
}

const identities = codec<SocialIdentityRecord>()('social_identities', {
  id: true,
  tenantId: true,
  connectionId: true,
  subject: true,
  userId: true,
  email: true,
  emailVerified: bool,
  name: true,
  picture: true,
  linkedAt: true,
  lastLoginAt: true,
});

export class SocialIdentityRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(i: SocialIdentityRecord): Promise<void> {
    await this.db.insertInto('social_identities').values(identities.toRow(i)).execute();
  }

  async find(tenantId: string, connectionId: string, subject: string): Promise<SocialIdentityRecord | undefined> {
    const row = await this.db
      .selectFrom('social_identities')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, connection_id: connectionId, subject }))
      .executeTakeFirst();
    return row && identities.toRecord(row);
  }

  /** What the upstream says now (email, name, picture) and the time of this sign-in. */
  async touch(tenantId: string, id: string, seen: Pick<SocialIdentityRecord, 'email' | 'emailVerified' | 'name' | 'picture'>, now: number): Promise<void> {
    await this.db
      .updateTable('social_identities')
      .set({ email: seen.email, email_verified: seen.emailVerified ? 1 : 0, name: seen.name, picture: seen.picture, last_login_at: now })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .execute();
  }

  async listByUser(tenantId: string, userId: string, limit: number): Promise<SocialIdentityRecord[]> {
    const rows = await this.db
      .selectFrom('social_identities')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId }))
      .orderBy('linked_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(identities.toRecord);
  }

  async delete(tenantId: string, userId: string, id: string): Promise<SocialIdentityRecord | undefined> {
    const found = await this.db
      .selectFrom('social_identities')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, user_id: userId, id }))
      .executeTakeFirst();
    if (!found) return undefined;
    await this.db
      .deleteFrom('social_identities')
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .execute();
    return identities.toRecord(found);
  }
}

export class SocialSettingsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The tenant's account-linking setting (`verified_email` when never set). */
  async get(tenantId: string): Promise<{ accountLinking: AccountLinking; updatedAt: number | null }> {
    const row = await this.db.selectFrom('social_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return row
      ? { accountLinking: row.account_linking as AccountLinking, updatedAt: Number(row.updated_at) }
      : { accountLinking: 'verified_email', updatedAt: null };
  }

  async set(tenantId: string, accountLinking: AccountLinking, now: number): Promise<void> {
    await this.db
      .insertInto('social_settings')
      .values({ tenant_id: tenantId, account_linking: accountLinking, updated_at: now })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ account_linking: accountLinking, updated_at: now }))
      .execute();
  }
}
