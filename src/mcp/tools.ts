/**
 * The MCP tools: each names the scope it needs (checked before the call reaches the server, see
 * src/http/mcp-routes.ts) and acts only within the signed-in user's memberships. Inputs are
 * zod schemas (the SDK validates them); failures are tool errors (`isError`) carrying an error
 * code and description, never a stack trace. Every call is audited as `mcp.tool.called` with its
 * outcome but not its arguments. Framework-free: the McpServer is built per request.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { VaultCaller, VaultService } from '../connect/vault.js';
import type { CredentialService } from '../credentials/service.js';
import type { EventRecorder } from '../events/recorder.js';
import { AppError, errors } from '../kernel/errors.js';
import type { Logger } from '../kernel/logging.js';
import { KEYHALL_VERSION } from '../kernel/version.js';
import { hasScope } from '../oauth/scope.js';
import type { AccessTokenClaims } from '../oauth/tokens/verify-access-token.js';
import type { Db } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import type { McpScope } from './resource.js';

export interface McpToolDeps {
  db: Db;
  events: EventRecorder;
  vault: Pick<VaultService, 'retrieve'>;
  credentials: Pick<CredentialService, 'createOffer'>;
  log: Pick<Logger, 'error'>;
}

/** Who calls: the tenant, and the verified access token (user = `sub`, client = `client_id`). */
export interface McpCall {
  tenant: { id: string; issuer: string; host: string };
  token: AccessTokenClaims;
}

/** Each tool and the scope it needs (the route checks it before the SDK sees the call). */
export const TOOL_SCOPES: Readonly<Record<string, McpScope>> = {
  whoami: 'mcp:read',
  list_organizations: 'mcp:read',
  list_members: 'mcp:read',
  get_connected_account_token: 'mcp:connected_accounts',
  create_credential_offer: 'mcp:credentials',
};

const ORG_ID = z.string().regex(/^org_[0-9a-z]{26}$/, 'must be an org_ id');
const ADMIN_ROLE = 'admin';

/** Each tool's input (zod shapes): the SDK validates calls against them and lists them in tools/list. */
const TOOL_INPUTS = {
  whoami: {},
  list_organizations: {},
  list_members: { organization_id: ORG_ID, after: z.string().max(100).optional() },
  get_connected_account_token: { account_id: z.string().regex(/^acct_[0-9a-z]{26}$/, 'must be an acct_ id') },
  create_credential_offer: {
    organization_id: ORG_ID,
    credential_configuration_id: z.string().min(1).max(200),
    user_id: z.string().max(100).optional(),
    claims: z.record(z.string(), z.unknown()).optional(),
  },
} satisfies Record<keyof typeof TOOL_SCOPES, z.ZodRawShape>;
const toolInputs: Readonly<Record<string, z.ZodRawShape>> = TOOL_INPUTS;

const json = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
});

/** The `mcp.tool.called` audit event of one call (never its arguments). */
function recordCall(deps: McpToolDeps, call: McpCall, tool: string, outcome: 'success' | 'error', organizationId: string | null, error?: string) {
  const clientId = call.token.client_id;
  return deps.events.transaction(deps.db.kysely, (trx) =>
    deps.events.record(trx, {
      tenantId: call.tenant.id,
      type: 'mcp.tool.called',
      organizationId,
      actor: { type: 'oauth_client', id: clientId },
      data: { tool, client_id: clientId, user_id: call.token.sub, outcome, ...(error ? { error } : {}) },
    }),
  );
}

/**
 * What is settled in HTTP before the SDK sees a call:
 * - arguments the tool's input refuses: the SDK answers them with a tool error before the tool
 *   runs, so the call is audited here (`error: invalid_request`), with the same schema the SDK
 *   checks (never the arguments themselves);
 * - refusals answered in HTTP (like a missing scope): a connected account of another user is
 *   `403 forbidden` (the vault's rule for every caller), audited.
 */
export async function refuseToolCall(call: McpCall, tool: string, args: unknown, deps: McpToolDeps): Promise<void> {
  const input = Object.hasOwn(toolInputs, tool) ? toolInputs[tool] : undefined;
  if (!input) return; // an unknown tool: the SDK answers it, and there is no tool to audit
  if (!z.object(input).safeParse(args ?? {}).success) {
    await recordCall(deps, call, tool, 'error', null, 'invalid_request');
    return;
  }
  if (tool !== 'get_connected_account_token') return;
  const accountId = (args as { account_id?: unknown } | undefined)?.account_id;
  if (typeof accountId !== 'string') return;
  const account = await repos(deps.db.kysely, deps.db.dialect).connectedAccounts.find(call.tenant.id, accountId);
  if (!account || account.userId === call.token.sub) return;
  await recordCall(deps, call, tool, 'error', account.organizationId, 'forbidden');
  throw errors.forbidden('this connected account belongs to another user');
}

export function buildMcpServer(call: McpCall, deps: McpToolDeps): McpServer {
  const server = new McpServer({ name: 'keyhall', version: KEYHALL_VERSION }, { capabilities: { tools: {} } });
  const r = () => repos(deps.db.kysely, deps.db.dialect);
  const userId = call.token.sub;
  const clientId = call.token.client_id;

  const audit = (tool: string, outcome: 'success' | 'error', organizationId: string | null, error?: string) =>
    recordCall(deps, call, tool, outcome, organizationId, error);

  /** Runs a tool: its scope again (belt and braces), the result or a tool error, the audit event. */
  const run = async (tool: string, organizationId: string | null, body: () => Promise<unknown>): Promise<CallToolResult> => {
    try {
      if (!hasScope(call.token.scope, TOOL_SCOPES[tool]!)) throw errors.insufficientScope(`requires scope ${TOOL_SCOPES[tool]}`);
      const value = await body();
      await audit(tool, 'success', organizationId);
      return json(value);
    } catch (err) {
      const known = err instanceof AppError;
      if (!known) deps.log.error({ err, tool }, 'mcp tool failed');
      const code = known ? err.code : 'server_error';
      await audit(tool, 'error', organizationId, code);
      const description = known ? err.description : 'the tool failed; try again later';
      return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: code, ...(description ? { error_description: description } : {}) }) }] };
    }
  };

  /** The user's membership of an organization, or not_found (another organization is not theirs to see). */
  const membership = async (organizationId: string) => {
    const m = await r().members.find(call.tenant.id, organizationId, userId);
    if (!m) throw errors.notFound('no such organization among yours');
    return m;
  };

  server.registerTool('whoami', { description: 'The signed-in user and the client acting for them (scope mcp:read).', inputSchema: TOOL_INPUTS.whoami }, () =>
    run('whoami', null, async () => {
      const user = await r().users.find(call.tenant.id, userId);
      if (!user) throw errors.notFound('the signed-in user no longer exists');
      return { user_id: user.id, email: user.email, name: user.name, client_id: clientId, scope: call.token.scope ?? '' };
    }),
  );

  server.registerTool(
    'list_organizations',
    { description: 'The organizations the signed-in user is a member of, with their role (scope mcp:read).', inputSchema: TOOL_INPUTS.list_organizations },
    () =>
      run('list_organizations', null, async () => {
        const out = [];
        for (const m of await r().members.listByUser(call.tenant.id, userId)) {
          const org = await r().organizations.find(call.tenant.id, m.organizationId);
          if (org) out.push({ id: org.id, name: org.name, role: m.role });
        }
        return { organizations: out };
      }),
  );

  server.registerTool(
    'list_members',
    {
      description: 'The members of one of your organizations (scope mcp:read; at most 100, after `after`).',
      inputSchema: TOOL_INPUTS.list_members,
    },
    ({ organization_id, after }) =>
      run('list_members', organization_id, async () => {
        await membership(organization_id);
        const members = await r().members.list(call.tenant.id, organization_id, after, 100);
        return { members: members.map((m) => ({ user_id: m.userId, email: m.email, name: m.name, role: m.role })) };
      }),
  );

  server.registerTool(
    'get_connected_account_token',
    {
      description: 'An access token of one of your own connected accounts, refreshed upstream if near expiry (scope mcp:connected_accounts).',
      inputSchema: TOOL_INPUTS.get_connected_account_token,
    },
    async ({ account_id }) => {
      const account = await r().connectedAccounts.find(call.tenant.id, account_id);
      const own = account?.userId === userId ? account : undefined;
      return run('get_connected_account_token', own?.organizationId ?? null, async () => {
        if (!own) throw errors.accountNotFound();
        await membership(own.organizationId);
        const caller: VaultCaller = { type: 'oauth_client', clientId, userId, act: (call.token.act as Record<string, unknown> | undefined) ?? null };
        const token = await deps.vault.retrieve(call.tenant.id, own.organizationId, own.id, caller);
        return { access_token: token.accessToken, expires_at: token.expiresAt, scopes: token.scopes };
      });
    },
  );

  server.registerTool(
    'create_credential_offer',
    {
      description: 'Offers a verifiable credential (OID4VCI) in one of your organizations where you are an admin (scope mcp:credentials).',
      inputSchema: TOOL_INPUTS.create_credential_offer,
    },
    ({ organization_id, credential_configuration_id, user_id, claims }) =>
      run('create_credential_offer', organization_id, async () => {
        const m = await membership(organization_id);
        if (m.role !== ADMIN_ROLE) throw errors.forbidden('creating credential offers needs the admin role in this organization');
        if ((user_id === undefined) === (claims === undefined)) throw errors.invalidRequest('give either user_id or claims');
        const subject = user_id !== undefined ? { user_id } : { claims: claims! };
        const tenant = { id: call.tenant.id, issuer: call.tenant.issuer, name: call.tenant.host };
        const made = await deps.credentials.createOffer(tenant, { type: 'oauth_client', id: clientId }, organization_id, {
          credential_configuration_id,
          subject,
        });
        return { offer_id: made.offer.id, credential_offer_uri: made.credentialOfferUri, expires_at: new Date(made.offer.expiresAt).toISOString() };
      }),
  );

  return server;
}
