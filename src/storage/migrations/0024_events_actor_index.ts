import type { Kysely } from 'kysely';

// The events feed filters by actor (`actor_type`, `actor_id`, in either order): without an index
// a filter for a rare actor read the tenant's whole event history.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_tenant_actor_seq').on('events').columns(['tenant_id', 'actor_type', 'actor_id', 'seq']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_tenant_actor_seq').execute();
}
