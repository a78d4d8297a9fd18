import type { Kysely } from 'kysely';
import type { AuthMethod, ClientRecord, ClientStore, TokenExchangePolicy } from '../../oauth/types.js';
import type { Database } from '../schema.js';

type Row = Database['oauth_clients'];

const toRecord = (r: Row): ClientRecord => ({
  id: r.id,
  tenantId: r.tenant_id,
  clientName: r.client_name,
  secretHash: r.secret_hash,
  authMethod: r.token_endpoint_auth_method as AuthMethod,
  grantTypes: JSON.parse(r.grant_types) as string[],
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  allowedResources: JSON.parse(r.allowed_resources) as string[],
  scopes: r.scope ? r.scope.split(' ') : [],
  jwks: r.jwks ? (JSON.parse(r.jwks) as ClientRecord['jwks']) : null,
  jwksUri: r.jwks_uri,
  dpopBound: r.dpop_bound_access_tokens === 1,
  tokenExchange: r.token_exchange ? (JSON.parse(r.token_exchange) as TokenExchangePolicy) : null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  secretRotatedAt: r.secret_rotated_at,
});

const toRow = (c: ClientRecord): Row => ({
  id: c.id,
  tenant_id: c.tenantId,
  client_name: c.clientName,
  secret_hash: c.secretHash,
  token_endpoint_auth_method: c.authMethod,
  grant_types: JSON.stringify(c.grantTypes),
  redirect_uris: JSON.stringify(c.redirectUris),
  allowed_resources: JSON.stringify(c.allowedResources),
  scope: c.scopes.join(' '),
  jwks: c.jwks ? JSON.stringify(c.jwks) : null,
  jwks_uri: c.jwksUri,
  dpop_bound_access_tokens: c.dpopBound ? 1 : 0,
  token_exchange: c.tokenExchange ? JSON.stringify(c.tokenExchange) : null,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  secret_rotated_at: c.secretRotatedAt,
});

/** OAuth clients. Tenant-wide: every query filters on tenant_id. */
export class OAuthClientRepo implements ClientStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(client: ClientRecord): Promise<void> {
    await this.db.insertInto('oauth_clients').values(toRow(client)).execute();
  }

  async find(tenantId: string, clientId: string): Promise<ClientRecord | undefined> {
    const row = await this.db
      .selectFrom('oauth_clients')
      .selectAll()
      .where('id', '=', clientId)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** A page of clients ordered by id (ids sort by creation time), after `cursor`. */
  async list(tenantId: string, opts: { after?: string; limit: number }): Promise<ClientRecord[]> {
    let q = this.db.selectFrom('oauth_clients').selectAll().where('tenant_id', '=', tenantId);
    if (opts.after) q = q.where('id', '>', opts.after);
    const rows = await q.orderBy('id').limit(opts.limit).execute();
    return rows.map(toRecord);
  }

  /** Replaces a client's stored fields; false when it does not exist in this tenant. */
  async update(client: ClientRecord): Promise<boolean> {
    const { id: _id, tenant_id: _t, created_at: _c, ...fields } = toRow(client);
    const r = await this.db
      .updateTable('oauth_clients')
      .set(fields)
      .where('id', '=', client.id)
      .where('tenant_id', '=', client.tenantId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async delete(tenantId: string, clientId: string): Promise<boolean> {
    const r = await this.db.deleteFrom('oauth_clients').where('id', '=', clientId).where('tenant_id', '=', tenantId).executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }
}
