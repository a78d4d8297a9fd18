/**
 * /mcp (Streamable HTTP, stateless: one SDK transport and server per request, the raw Node
 * request and response after `reply.hijack()`), its RFC 9728 metadata, and /register (RFC 7591).
 * Core: src/mcp/.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../kernel/errors.js';
import type { McpRegistrationService } from '../mcp/registration.js';
import { MCP_CHALLENGE_SCOPE, MCP_METADATA_PATH, MCP_PATH, mcpProtectedResourceMetadata, mcpResource } from '../mcp/resource.js';
import { buildMcpServer, type McpToolDeps, refuseToolCall, TOOL_SCOPES } from '../mcp/tools.js';
import type { OAuthServer } from '../oauth/compose.js';
import { resourceErrors } from '../oauth/errors.js';
import { DPOP_ALGS } from '../oauth/dpop/verify.js';
import { hasScope } from '../oauth/scope.js';
import type { AccessTokenClaims } from '../oauth/tokens/verify-access-token.js';
import { oauthHeaders } from './oauth/request.js';
import { tenantOf } from './tenant.js';

export interface McpRouteOptions {
  oauth: Pick<OAuthServer, 'guard'>;
  registration: McpRegistrationService;
  tools: McpToolDeps;
}

/** The JSON-RPC messages of a POST body (one, or a batch of an older protocol revision). */
function messages(body: unknown): Array<{ method?: unknown; params?: { name?: unknown; arguments?: unknown } }> {
  const list = Array.isArray(body) ? body : [body];
  return list.filter((m): m is { method?: unknown; params?: { name?: unknown; arguments?: unknown } } => typeof m === 'object' && m !== null);
}

/**
 * DNS-rebinding protection (MCP transport spec): a browser request must come from the tenant's
 * own origin. Requests without Origin (agents, servers) are not browser requests.
 */
function checkOrigin(request: FastifyRequest, issuer: string): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  if (origin !== new URL(issuer).origin) throw errors.forbidden('this Origin may not call /mcp');
}

export async function mcpRoutes(app: FastifyInstance, opts: McpRouteOptions): Promise<void> {
  app.get(MCP_METADATA_PATH, async (request, reply) =>
    reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=300')
      .type('application/json')
      .send(mcpProtectedResourceMetadata(tenantOf(request).issuer)),
  );

  app.post('/register', async (request, reply) => {
    const tenant = tenantOf(request);
    const client = await opts.registration.register(tenant, request.body, { authorization: request.headers.authorization, ip: request.ip });
    return reply.code(201).header('cache-control', 'no-store').send(client);
  });

  const guard = async (request: FastifyRequest): Promise<AccessTokenClaims> => {
    const tenant = tenantOf(request);
    checkOrigin(request, tenant.issuer);
    const resource = mcpResource(tenant.issuer);
    const guardOptions = { resource, resourceMetadataPath: MCP_METADATA_PATH, challengeScope: MCP_CHALLENGE_SCOPE };
    const claims = await opts.oauth.guard({ method: request.method, url: resource, headers: oauthHeaders(request.raw) }, tenant, guardOptions);
    const challenge = {
      scheme: claims.cnf?.jkt ? ('DPoP' as const) : ('Bearer' as const),
      resourceMetadata: `${tenant.issuer}${MCP_METADATA_PATH}`,
      algs: DPOP_ALGS,
    };
    // The audience is exactly /mcp: a token also good for other resources is not accepted here.
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (aud.length !== 1) throw resourceErrors.invalidToken(challenge, 'the token must be for this resource only');
    // Step-up (MCP authorization spec): a tool call without the tool's scope is 403 naming it.
    for (const m of messages(request.body)) {
      if (m.method !== 'tools/call' || typeof m.params?.name !== 'string') continue;
      const scope = Object.hasOwn(TOOL_SCOPES, m.params.name) ? TOOL_SCOPES[m.params.name] : undefined;
      if (scope && !hasScope(claims.scope, scope)) throw resourceErrors.insufficientScope(challenge, scope);
    }
    return claims;
  };

  app.post(MCP_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
    const claims = await guard(request);
    const tenant = tenantOf(request);
    for (const m of messages(request.body)) {
      if (m.method === 'tools/call' && typeof m.params?.name === 'string')
        await refuseToolCall({ tenant, token: claims }, m.params.name, m.params.arguments, opts.tools);
    }
    const server = buildMcpServer({ tenant, token: claims }, opts.tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.setHeader('x-request-id', request.id);
    reply.raw.setHeader('x-content-type-options', 'nosniff');
    reply.raw.setHeader('cache-control', 'no-store');
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      request.log.error({ err }, 'mcp request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
      }
    }
  });
}
