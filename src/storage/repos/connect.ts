/**
 * The connected-accounts vault: upstream providers and accounts (tokens as envelope ciphertext;
 * refreshes claimed and stored by compare-and-set on `version`). Its round trips live in
 * upstream_round_trips. Every query filters on tenant_id.
 */
import type { Kysely } from 'kysely';
import { compareAndSet } from '../atomic.js';
import { bool, cast, codec, json, num, words } from '../codec.js';
import type { Database } from '../schema.js';

export type ProviderKind = 'oauth2' | 'oidc';
export type UpstreamAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';
export type AccountStatus = 'active' | 'needs_reauthorization';

export interface ConnectProviderRecord {
  id: string;
  tenantId: string;
  name: string;
  preset: string | null;
  kind: ProviderKind;
  issuer: string | null;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  clientId: string;
  clientSecretEnc: string | null;
  tokenEndpointAuthMethod: UpstreamAuthMethod;
  scopes: string[];
  pkce: boolean;
  authorizeParams: Record<string, string>;
  issParameterSupported: boolean;
  /** A generic OAuth 2.0 provider's userinfo endpoint, read for the subject when no ID token names it. */
  userinfoEndpoint: string | null;
  /** The field path of the subject in that document. */
  subjectField: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface ConnectedAccountRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  userId: string;
  providerId: string;
  subject: string | null;
  scopes: string[];
  status: AccountStatus;
  accessTokenEnc: string;
  refreshTokenEnc: string | null;
  expiresAt: number | null;
  version: number;
  refreshOwner: string | null;
  refreshUntil: number | null;
  lastRefreshedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** The token fields a connect or a refresh writes. */
export interface StoredTokens {
  accessTokenEnc: string;
  refreshTokenEnc: string | null;
  expiresAt: number | null;
  scopes: string[];
}

const providers = codec<ConnectProviderRecord>()('connect_providers', {
  id: true,
  tenantId: true,
  name: true,
  preset: true,
  kind: cast<ProviderKind>(),
  issuer: true,
  authorizationEndpoint: true,
  tokenEndpoint: true,
  revocationEndpoint: true,
  clientId: true,
  clientSecretEnc: true,
  tokenEndpointAuthMethod: cast<UpstreamAuthMethod>(),
  scopes: words.in('scope'),
  pkce: bool,
  authorizeParams: json<Record<string, string>>(),
  issParameterSupported: bool,
  userinfoEndpoint: true,
  subjectField: true,
  createdAt: true,
  updatedAt: true,
});

const accounts = codec<ConnectedAccountRecord>()('connected_accounts', {
  id: true,
  tenantId: true,
  organizationId: true,
  userId: true,
  providerId: true,
  subject: true,
  scopes: words.in('scope'),
  status: cast<AccountStatus>(),
  accessTokenEnc: true,
  refreshTokenEnc: true,
  expiresAt: true,
  version: num,
  refreshOwner: true,
  refreshUntil: true,
  lastRefreshedAt: true,
  createdAt: true,
  updatedAt: true,
});

export class ConnectProviderRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(p: ConnectProviderRecord): Promise<void> {
    await this.db.insertInto('connect_providers').values(providers.toRow(p)).execute();
  }

  async find(tenantId: string, id: string): Promise<ConnectProviderRecord | undefined> {
    const row = await this.db
      .selectFrom('connect_providers')
      .selectAll()
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .executeTakeFirst();
    return row && providers.toRecord(row);
  }

  /** A page ordered by id (ids sort by creation time), after `cursor`. */
  async list(tenantId: string, opts: { after?: string | undefined; limit: number }): Promise<ConnectProviderRecord[]> {
    let q = this.db.selectFrom('connect_providers').selectAll().where('tenant_id', '=', tenantId);
    if (opts.after) q = q.where('id', '>', opts.after);
    return (await q.orderBy('id').limit(opts.limit).execute()).map(providers.toRecord);
  }

  async update(p: ConnectProviderRecord): Promise<boolean> {
    const { id: _id, tenant_id: _t, created_at: _c, ...fields } = providers.toRow(p);
    const r = await this.db
      .updateTable('connect_providers')
      .set(fields)
      .where((eb) => eb.and({ id: p.id, tenant_id: p.tenantId }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('connect_providers')
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}

export interface AccountFilter {
  organizationId?: string;
  userId?: string;
  providerId?: string;
  status?: AccountStatus;
  after?: string;
  limit: number;
}

export class ConnectedAccountRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(a: ConnectedAccountRecord): Promise<void> {
    await this.db.insertInto('connected_accounts').values(accounts.toRow(a)).execute();
  }

  async find(tenantId: string, id: string): Promise<ConnectedAccountRecord | undefined> {
    const row = await this.db
      .selectFrom('connected_accounts')
      .selectAll()
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .executeTakeFirst();
    return row && accounts.toRecord(row);
  }

  /** The account a user already has at a provider for an organization (and upstream subject). */
  async findExisting(
    tenantId: string,
    organizationId: string,
    userId: string,
    providerId: string,
    subject: string | null,
  ): Promise<ConnectedAccountRecord | undefined> {
    const row = await this.db
      .selectFrom('connected_accounts')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, user_id: userId, provider_id: providerId }))
      .where((eb) => (subject === null ? eb('subject', 'is', null) : eb('subject', '=', subject)))
      .orderBy('id')
      .executeTakeFirst();
    return row && accounts.toRecord(row);
  }

  async list(tenantId: string, f: AccountFilter): Promise<ConnectedAccountRecord[]> {
    let q = this.db.selectFrom('connected_accounts').selectAll().where('tenant_id', '=', tenantId);
    if (f.organizationId) q = q.where('organization_id', '=', f.organizationId);
    if (f.userId) q = q.where('user_id', '=', f.userId);
    if (f.providerId) q = q.where('provider_id', '=', f.providerId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.after) q = q.where('id', '>', f.after);
    return (await q.orderBy('id').limit(f.limit).execute()).map(accounts.toRecord);
  }

  async countByProvider(tenantId: string, providerId: string): Promise<number> {
    const r = await this.db
      .selectFrom('connected_accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .where((eb) => eb.and({ tenant_id: tenantId, provider_id: providerId }))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** New tokens from a connect: the account is active again, a running refresh claim is void. */
  async replaceTokens(tenantId: string, id: string, t: StoredTokens, now: number): Promise<void> {
    await this.db
      .updateTable('connected_accounts')
      .set((eb) => ({
        access_token_enc: t.accessTokenEnc,
        refresh_token_enc: t.refreshTokenEnc,
        expires_at: t.expiresAt,
        scope: t.scopes.join(' '),
        status: 'active',
        version: eb('version', '+', 1),
        refresh_owner: null,
        refresh_until: null,
        updated_at: now,
      }))
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .execute();
  }

  /**
   * Claims the refresh of version `version` for `owner` until `until`: compare-and-set on the
   * version, while no other claim is live. Exactly one of concurrent callers gets true.
   */
  claimRefresh(tenantId: string, id: string, version: number, owner: string, now: number, until: number): Promise<boolean> {
    return compareAndSet(this.db, 'connected_accounts', {
      key: { id, tenant_id: tenantId },
      seen: { version, status: 'active' },
      set: { refresh_owner: owner, refresh_until: until },
      also: (eb) => eb.or([eb('refresh_until', 'is', null), eb('refresh_until', '<=', now)]),
    });
  }

  /** Stores refreshed tokens (and the next version) if this owner's claim on `version` stands. */
  storeRefreshed(tenantId: string, id: string, version: number, owner: string, t: StoredTokens, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'connected_accounts', {
      key: { id, tenant_id: tenantId },
      seen: { version, refresh_owner: owner },
      set: {
        access_token_enc: t.accessTokenEnc,
        refresh_token_enc: t.refreshTokenEnc,
        expires_at: t.expiresAt,
        scope: t.scopes.join(' '),
        version: version + 1,
        refresh_owner: null,
        refresh_until: null,
        last_refreshed_at: now,
        updated_at: now,
      },
    });
  }

  /** Gives up this owner's claim (the refresh failed transiently); the version stays. */
  releaseRefresh(tenantId: string, id: string, version: number, owner: string): Promise<boolean> {
    return compareAndSet(this.db, 'connected_accounts', {
      key: { id, tenant_id: tenantId },
      seen: { version, refresh_owner: owner },
      set: { refresh_owner: null, refresh_until: null },
    });
  }

  /** The upstream refused the refresh token: the user must connect again. */
  markNeedsReauthorization(tenantId: string, id: string, version: number, owner: string, now: number): Promise<boolean> {
    return compareAndSet(this.db, 'connected_accounts', {
      key: { id, tenant_id: tenantId },
      seen: { version, refresh_owner: owner },
      set: { status: 'needs_reauthorization', version: version + 1, refresh_owner: null, refresh_until: null, updated_at: now },
    });
  }

  /** Deletes a member's accounts in an organization; returns them as they were when deleted. */
  async deleteForMember(tenantId: string, organizationId: string, userId: string): Promise<ConnectedAccountRecord[]> {
    const rows = await this.db
      .deleteFrom('connected_accounts')
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, user_id: userId }))
      .returningAll()
      .execute();
    return rows.map(accounts.toRecord).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('connected_accounts')
      .where((eb) => eb.and({ id, tenant_id: tenantId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
