import { type Kysely, sql } from 'kysely';

// A credential outlives the key rotation overlap: a retired key that signed credentials stays in
// the issuer's jwt-vc-issuer metadata until the last of them expires (docs/credentials.md, "Keys").
// Credentials issued before this column record no key, so a retired EdDSA key is backfilled with
// the latest expiry of the credentials issued while it could sign (from its creation to the end
// of its overlap).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signing_keys').addColumn('published_until', 'bigint').execute();
  await sql`
    update signing_keys set published_until = (
      select max(c.expires_at) from credentials c
      where c.tenant_id = signing_keys.tenant_id
        and c.issued_at >= signing_keys.created_at
        and (signing_keys.expires_at is null or c.issued_at < signing_keys.expires_at)
    )
    where alg = 'EdDSA'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signing_keys').dropColumn('published_until').execute();
}
