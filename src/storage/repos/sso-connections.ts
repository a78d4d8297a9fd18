import type { Kysely } from 'kysely';
import { bool, cast, codec, json } from '../codec.js';
import type { Database } from '../schema.js';

export type SsoProtocol = 'oidc' | 'saml';

/** The upstream's authorization server metadata, as discovered (RFC 8414 / OIDC Discovery). */
export type UpstreamMetadata = Record<string, unknown> & { issuer: string };

/** Public settings of an OIDC connection (the client secret is stored apart, encrypted). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  scopes: string[];
  pkce: boolean;
  /** Which ID-token claim carries each attribute. */
  claims: { email: string; name: string; groups: string };
  /** The ID-token algorithm chosen from the upstream's own list (never `none`, never HS*). */
  idTokenAlg: string;
  /** client_secret_basic | client_secret_post | none */
  tokenAuthMethod: string;
  metadata: UpstreamMetadata;
}

/** Public settings of a SAML 2.0 connection (Keyhall is the service provider). */
export interface SamlSettings {
  /** The IdP's entityID (the Issuer its assertions must carry). */
  idpEntityId: string;
  /** The IdP's SingleSignOnService for the HTTP-Redirect binding (where AuthnRequests go). */
  idpSsoUrl: string;
  /** The IdP's signing certificates (base64 DER, as in its metadata). */
  idpCertificates: string[];
  /** Where the metadata was fetched from (null: imported as XML). */
  metadataUrl: string | null;
  /** The SP entity id (the audience); null: `<issuer>/sso/saml/<connectionId>/metadata`. */
  spEntityId: string | null;
  /** A signed Response is enough even when its assertion is not signed (default false). */
  allowSignedResponse: boolean;
  /** Which assertion attribute carries each attribute (the email falls back to an emailAddress NameID). */
  attributes: {
    email: string;
    name: string;
    groups: string;
    /** An attribute whose value `true` says the IdP verified the email; absent: the verified-domain rule. */ emailVerified?: string;
  };
}

export interface SsoConnectionRecord {
  id: string;
  tenantId: string;
  organizationId: string;
  protocol: SsoProtocol;
  name: string;
  enabled: boolean;
  defaultRole: string;
  /** upstream group (lower case) → organization role. */
  groupRoles: Record<string, string>;
  /** OidcSettings for `oidc`, SamlSettings for `saml` (see oidcSettings / samlSettings). */
  config: OidcSettings | SamlSettings;
  secretEnc: string | null;
  /** The IdP's own MFA statement counts as a second factor (docs/sso.md, "MFA"). */
  trustIdpMfa: boolean;
  createdAt: number;
  updatedAt: number;
}

const stored = codec<SsoConnectionRecord>()('sso_connections', {
  id: true,
  tenantId: true,
  organizationId: true,
  protocol: cast<SsoProtocol>(),
  name: true,
  enabled: bool,
  defaultRole: true,
  groupRoles: json<Record<string, string>>(),
  config: json<OidcSettings | SamlSettings>(),
  secretEnc: true,
  trustIdpMfa: bool,
  createdAt: true,
  updatedAt: true,
});

/** The OIDC settings of an `oidc` connection. */
export function oidcSettings(c: SsoConnectionRecord): OidcSettings {
  if (c.protocol !== 'oidc') throw new Error(`connection ${c.id} is not an OIDC connection`);
  return c.config as OidcSettings;
}

/** The SAML settings of a `saml` connection. */
export function samlSettings(c: SsoConnectionRecord): SamlSettings {
  if (c.protocol !== 'saml') throw new Error(`connection ${c.id} is not a SAML connection`);
  return c.config as SamlSettings;
}

const PATCHABLE = ['name', 'enabled', 'defaultRole', 'groupRoles', 'config', 'secretEnc', 'trustIdpMfa'] as const;
export type SsoConnectionPatch = Partial<Pick<SsoConnectionRecord, (typeof PATCHABLE)[number]>>;

export class SsoConnectionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(c: SsoConnectionRecord): Promise<void> {
    await this.db.insertInto('sso_connections').values(stored.toRow(c)).execute();
  }

  async find(tenantId: string, organizationId: string, id: string): Promise<SsoConnectionRecord | undefined> {
    const row = await this.db
      .selectFrom('sso_connections')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** A connection by id alone within the tenant (the sign-in callback knows no organization). */
  async findInTenant(tenantId: string, id: string): Promise<SsoConnectionRecord | undefined> {
    const row = await this.db
      .selectFrom('sso_connections')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, id }))
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  /** Whether any organization of the tenant has an enabled connection (the login page's SSO hint). */
  async anyEnabled(tenantId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('sso_connections')
      .select('id')
      .where((eb) => eb.and({ tenant_id: tenantId, enabled: 1 }))
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async listByOrganization(tenantId: string, organizationId: string): Promise<SsoConnectionRecord[]> {
    const rows = await this.db
      .selectFrom('sso_connections')
      .selectAll()
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId }))
      .orderBy('id')
      .execute();
    return rows.map(stored.toRecord);
  }

  async update(tenantId: string, organizationId: string, id: string, patch: SsoConnectionPatch, now: number): Promise<SsoConnectionRecord | undefined> {
    const row = await this.db
      .updateTable('sso_connections')
      .set({ updated_at: now, ...stored.toPatch(patch, PATCHABLE) })
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .returningAll()
      .executeTakeFirst();
    return row && stored.toRecord(row);
  }

  async delete(tenantId: string, organizationId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('sso_connections')
      .where((eb) => eb.and({ tenant_id: tenantId, organization_id: organizationId, id }))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
