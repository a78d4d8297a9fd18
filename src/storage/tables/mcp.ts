/** Tables of /mcp (issue 17): the tenant's MCP client-onboarding policy. */
export interface McpSettingsTable {
  tenant_id: string;
  /** `open` | `initial_access_token` | `off`: who may use /register. */
  client_registration: string;
  /** 0/1: whether an https `client_id` names a Client ID Metadata Document. */
  client_id_metadata_documents: number;
  updated_at: number;
}

export interface McpTables {
  mcp_settings: McpSettingsTable;
}
