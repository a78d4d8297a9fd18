/**
 * /mcp as a protected resource (RFC 9728): its identifier, scopes and metadata document.
 * Framework-free; bound by src/http/mcp-routes.ts.
 */
import { DPOP_ALGS } from '../oauth/dpop/verify.js';
import { PROTECTED_RESOURCE_METADATA_PATH } from '../oauth/resource-server/guard.js';

export const MCP_PATH = '/mcp';
/** RFC 9728 §3.1: the metadata of a resource with a path is at the well-known path + that path. */
export const MCP_METADATA_PATH = `${PROTECTED_RESOURCE_METADATA_PATH}${MCP_PATH}`;

/** The scopes of the MCP tools (src/mcp/tools.ts says which tool needs which). */
export const MCP_SCOPES = ['mcp:read', 'mcp:connected_accounts', 'mcp:credentials'] as const;
export type McpScope = (typeof MCP_SCOPES)[number];

/** What a client without a token is told to ask for: every tool scope, and a refresh token. */
export const MCP_CHALLENGE_SCOPE = [...MCP_SCOPES, 'offline_access'].join(' ');

/** The resource identifier: the `resource` a client asks for and the `aud` of its tokens. */
export const mcpResource = (issuer: string): string => `${issuer}${MCP_PATH}`;

export function mcpProtectedResourceMetadata(issuer: string): Record<string, unknown> {
  return {
    resource: mcpResource(issuer),
    authorization_servers: [issuer],
    scopes_supported: [...MCP_SCOPES, 'offline_access'],
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    resource_name: 'Keyhall MCP server',
  };
}
