import type { Kysely } from 'kysely';
import type { AuthMethod, ClientOrganizationGrant, ClientRecord, ClientStore, TokenExchangePolicy } from '../../oauth/types.js';
import { bool, cast, codec, json, jsonOrNull, words } from '../codec.js';
import type { Database } from '../schema.js';

// The organization binding is read with the client but written only by setOrganizationGrant.
const stored = codec<Omit<ClientRecord, 'organizationGrant'>>()('oauth_clients', {
  id: true,
  tenantId: true,
  clientName: true,
  secretHash: true,
  authMethod: cast<AuthMethod>().in('token_endpoint_auth_method'),
  authMethodStrict: bool.in('auth_method_strict'),
  grantTypes: json<string[]>(),
  redirectUris: json<string[]>(),
  allowedResources: json<string[]>(),
  allowedOrigins: json<string[]>(),
  scopes: words.in('scope'),
  jwks: jsonOrNull<NonNullable<ClientRecord['jwks']>>(),
  jwksUri: true,
  dpopBound: bool.in('dpop_bound_access_tokens'),
  tokenExchange: jsonOrNull<TokenExchangePolicy>(),
  createdAt: true,
  updatedAt: true,
  secretRotatedAt: true,
});

function toRecord(row: Database['oauth_clients']): ClientRecord {
  const grant = row.organization_id !== null ? { organizationId: row.organization_id, roles: JSON.parse(row.organization_roles ?? '[]') as string[] } : null;
  return { ...stored.toRecord(row), organizationGrant: grant };
}

/** OAuth clients. Tenant-wide: every query filters on tenant_id. */
export class OAuthClientRepo implements ClientStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(client: ClientRecord): Promise<void> {
    await this.db.insertInto('oauth_clients').values(stored.toRow(client)).execute();
  }

  async find(tenantId: string, clientId: string): Promise<ClientRecord | undefined> {
    const row = await this.db
      .selectFrom('oauth_clients')
      .selectAll()
      .where((eb) => eb.and({ id: clientId, tenant_id: tenantId }))
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** How many OAuth clients the tenant has (the console overview). */
  async count(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('oauth_clients')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A page of clients ordered by id (ids sort by creation time), after `cursor`. */
  async list(tenantId: string, opts: { after?: string; limit: number }): Promise<ClientRecord[]> {
    let q = this.db.selectFrom('oauth_clients').selectAll().where('tenant_id', '=', tenantId);
    if (opts.after) q = q.where('id', '>', opts.after);
    return (await q.orderBy('id').limit(opts.limit).execute()).map(toRecord);
  }

  /** Every origin some client of the tenant lists in allowed_origins (CORS, oauth/cors.ts). */
  async allowedOrigins(tenantId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('oauth_clients')
      .select('allowed_origins')
      .where('tenant_id', '=', tenantId)
      .where('allowed_origins', '<>', '[]')
      .execute();
    return rows.flatMap((r) => JSON.parse(r.allowed_origins) as string[]);
  }

  /** Replaces a client's stored fields; false when it does not exist in this tenant. */
  async update(client: ClientRecord): Promise<boolean> {
    const { id: _id, tenant_id: _t, created_at: _c, ...fields } = stored.toRow(client);
    const r = await this.db
      .updateTable('oauth_clients')
      .set(fields)
      .where((eb) => eb.and({ id: client.id, tenant_id: client.tenantId }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Binds the client to an organization with these roles (null: unbinds); false when it does not exist. */
  async setOrganizationGrant(tenantId: string, clientId: string, grant: ClientOrganizationGrant | null, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('oauth_clients')
      .set({ organization_id: grant?.organizationId ?? null, organization_roles: grant ? JSON.stringify(grant.roles) : null, updated_at: now })
      .where((eb) => eb.and({ id: clientId, tenant_id: tenantId }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** A page of the clients bound to the organization, ordered by id, after `after`. */
  async listByOrganization(tenantId: string, organizationId: string, after: string | undefined, limit: number): Promise<ClientRecord[]> {
    let q = this.db
      .selectFrom('oauth_clients')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }));
    if (after) q = q.where('id', '>', after);
    return (await q.orderBy('id').limit(limit).execute()).map(toRecord);
  }

  async delete(tenantId: string, clientId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('oauth_clients')
      .where((eb) => eb.and({ id: clientId, tenant_id: tenantId }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
