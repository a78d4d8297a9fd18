import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import type { ActorType } from '../../events/catalogue.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { bool, codec, field, jsonOrNull } from '../codec.js';
import type { Database } from '../schema.js';

export interface UserRecord {
  id: string;
  tenantId: string;
  email: string;
  name: string | null;
  emailVerified: boolean;
  passwordHash: string | null;
  /** Who last set the password; null when there is none or it was set before this was recorded. */
  passwordSetBy: PasswordSetBy | null;
  createdAt: number;
  updatedAt: number;
  /** JSON objects an administrator sets (`metadata` public, `private_metadata`); absent or {}: none. */
  metadata?: UserMetadata | undefined;
  privateMetadata?: UserMetadata | undefined;
}

export type UserMetadata = Record<string, unknown>;

/** Metadata as stored: NULL for none. */
const metadataColumn = field<UserMetadata | undefined, string | null>(
  (v) => (v ? (JSON.parse(v) as UserMetadata) : {}),
  (v) => (v && Object.keys(v).length > 0 ? JSON.stringify(v) : null),
);

/** The actor that set a password, and whether it held every permission (else it is a narrower key). */
export interface PasswordSetBy {
  type: ActorType;
  id: string | null;
  every_permission: boolean;
  /**
   * passwordTag of the hash it describes: a password set by a release that does not record this
   * (an instance not yet upgraded, during a rolling upgrade) leaves a record that no longer
   * matches, which reads as unknown rather than as the previous setter.
   */
  hash_tag: string;
}

/** A short digest of a password hash, tying a PasswordSetBy to the password it describes. */
export const passwordTag = (passwordHash: string) => sha256Hex(passwordHash).slice(0, 16);

/** Who set the user's current password; null when there is none or that is not known. */
export function currentPasswordSetBy(u: Pick<UserRecord, 'passwordHash' | 'passwordSetBy'>): PasswordSetBy | null {
  if (u.passwordHash === null || u.passwordSetBy === null) return null;
  return u.passwordSetBy.hash_tag === passwordTag(u.passwordHash) ? u.passwordSetBy : null;
}

const stored = codec<UserRecord>()('users', {
  id: true,
  tenantId: true,
  email: true,
  name: true,
  emailVerified: bool,
  passwordHash: true,
  passwordSetBy: jsonOrNull<PasswordSetBy>(),
  createdAt: true,
  updatedAt: true,
  metadata: metadataColumn,
  privateMetadata: metadataColumn,
});

/** The fields `update` may change. */
const PATCHABLE = ['email', 'name', 'emailVerified', 'passwordHash', 'passwordSetBy', 'metadata', 'privateMetadata'] as const;
export type UserPatch = Partial<Pick<UserRecord, (typeof PATCHABLE)[number]>>;

export class UserRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(u: UserRecord): Promise<void> {
    await this.db.insertInto('users').values(stored.toRow(u)).execute();
  }

  async find(tenantId: string, id: string): Promise<UserRecord | undefined> {
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /**
   * The user and their organization memberships in one statement (a left join: one row per
   * membership, or one with none), for /userinfo and the ID token's claims: one round trip
   * instead of two on PostgreSQL.
   */
  async findWithMemberships(
    tenantId: string,
    id: string,
  ): Promise<
    { user: UserRecord; memberships: Array<{ organizationId: string; role: string }>; upstream: { name: string | null; picture: string | null } } | undefined
  > {
    // The latest social sign-in's name and picture (docs/social.md) in the same statement.
    const latestSocial = (column: 'name' | 'picture') => (eb: ExpressionBuilder<Database, 'users'>) =>
      eb
        .selectFrom('social_identities')
        .select(`social_identities.${column}`)
        .whereRef('social_identities.tenant_id', '=', 'users.tenant_id')
        .whereRef('social_identities.user_id', '=', 'users.id')
        .orderBy('social_identities.last_login_at', 'desc')
        .orderBy('social_identities.id')
        .limit(1)
        .as(`upstream_${column}`);
    const rows = await this.db
      .selectFrom('users')
      .leftJoin('members', (join) => join.onRef('members.tenant_id', '=', 'users.tenant_id').onRef('members.user_id', '=', 'users.id'))
      .selectAll('users')
      .select(['members.organization_id as member_organization_id', 'members.role as member_role'])
      .select(latestSocial('name'))
      .select(latestSocial('picture'))
      .where('users.tenant_id', '=', tenantId)
      .where('users.id', '=', id)
      .execute();
    const first = rows[0];
    if (!first) return undefined;
    const memberships = rows.flatMap((r) =>
      r.member_organization_id !== null && r.member_role !== null ? [{ organizationId: r.member_organization_id, role: r.member_role }] : [],
    );
    return { user: stored.toRecord(first), memberships, upstream: { name: first.upstream_name ?? null, picture: first.upstream_picture ?? null } };
  }

  /**
   * Write-locks the user's row until commit (PostgreSQL; SQLite runs one writing transaction at a
   * time): granting the administrator role and changing how the user signs in take it first, so
   * one of them sees the other committed instead of both passing their checks at once.
   */
  async lock(tenantId: string, id: string, dialect: Dialect): Promise<void> {
    if (dialect !== 'postgres') return;
    await this.db
      .selectFrom('users')
      .select('id')
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .forUpdate()
      .execute();
  }

  async findByEmail(tenantId: string, email: string): Promise<UserRecord | undefined> {
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, email }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** How many users the tenant has (the console overview). */
  async count(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async list(tenantId: string, after: string | undefined, limit: number, email?: string): Promise<UserRecord[]> {
    let q = this.db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId);
    if (after) q = q.where('id', '>', after);
    if (email !== undefined) q = q.where('email', '=', email);
    return (await q.orderBy('id').limit(limit).execute()).map(stored.toRecord);
  }

  /**
   * A new address (by /v1, SCIM or a confirmed change) also ends the user's pending address
   * changes: a link asked for before it must not replace it (docs/account.md).
   */
  async update(tenantId: string, id: string, patch: UserPatch, now: number): Promise<UserRecord | undefined> {
    if (patch.email !== undefined) {
      await this.db
        .updateTable('email_tokens')
        .set({ consumed_at: now })
        .where((eb) => eb.and([eb('tenant_id', '=', tenantId), eb('user_id', '=', id), eb('purpose', '=', 'email_change'), eb('consumed_at', 'is', null)]))
        .execute();
    }
    const row = await this.db
      .updateTable('users')
      .set({ updated_at: now, ...stored.toPatch(patch, PATCHABLE) })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /**
   * Replaces the password hash only while it is still `expected` (compare-and-set): the same
   * password re-hashed with today's parameters. `updated_at` stays; whether it was replaced.
   */
  async replacePasswordHash(tenantId: string, id: string, expected: string, next: Pick<UserRecord, 'passwordHash' | 'passwordSetBy'>): Promise<boolean> {
    const r = await this.db
      .updateTable('users')
      .set(stored.toPatch(next, PATCHABLE))
      .where((eb) => eb.and({ tenant_id: tenantId, id, password_hash: expected }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Marks the address confirmed (an emailed link or code was used). */
  async setEmailVerified(tenantId: string, id: string, now: number): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ email_verified: 1, updated_at: now })
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .execute();
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('users')
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
