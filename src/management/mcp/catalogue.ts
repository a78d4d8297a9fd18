// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the mcp feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const mcpCatalogue = {
  permissions: [],
  events: {
    'mcp.client.registered': {
      webhook: false,
      description: 'an MCP client registered itself at /register, or first identified itself by a Client ID Metadata Document',
    },
    'mcp.tool.called': { webhook: false, description: 'an MCP client called a tool at /mcp (tool, client, user, outcome; never the arguments)' },
  },
} as const;
