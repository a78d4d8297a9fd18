import type { Kysely } from 'kysely';
import { bool, codec, field } from '../codec.js';
import type { Database } from '../schema.js';

export const CLIENT_REGISTRATION_POLICIES = ['open', 'initial_access_token', 'off'] as const;
export type ClientRegistrationPolicy = (typeof CLIENT_REGISTRATION_POLICIES)[number];

export interface McpSettingsRecord {
  clientRegistration: ClientRegistrationPolicy;
  clientIdMetadataDocuments: boolean;
}

export const DEFAULT_MCP_SETTINGS: McpSettingsRecord = Object.freeze({ clientRegistration: 'initial_access_token', clientIdMetadataDocuments: true });

const policy = field<ClientRegistrationPolicy, string>(
  (v) => v as ClientRegistrationPolicy,
  (v) => v,
);
const stored = codec<McpSettingsRecord>()('mcp_settings', { clientRegistration: policy, clientIdMetadataDocuments: bool });

/** The tenant's MCP onboarding settings (src/mcp/settings.ts); no row: the defaults. */
export class McpSettingsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(tenantId: string): Promise<McpSettingsRecord> {
    const row = await this.db.selectFrom('mcp_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return row ? stored.toRecord(row) : { ...DEFAULT_MCP_SETTINGS };
  }

  async put(tenantId: string, s: McpSettingsRecord, now: number): Promise<void> {
    const values = { ...stored.toRow(s), updated_at: now };
    await this.db
      .insertInto('mcp_settings')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .execute();
  }
}
