/**
 * How MCP clients come to exist at a tenant: Dynamic Client Registration (RFC 7591, `/register`)
 * under the tenant's policy, and the policy itself (`/v1/mcp/settings`). A registered client is a
 * public client of the code flow with PKCE, for `<issuer>/mcp` only, third-party (the user is
 * asked to consent), listed and deleted like any client at /v1/clients. Framework-free.
 */
import { z } from 'zod';
import type { Actor } from '../events/catalogue.js';
import type { Clock } from '../kernel/clock.js';
import { AppError, errors } from '../kernel/errors.js';
import type { ClientService } from '../management/clients/service.js';
import type { Principal } from '../management/principal.js';
import { oauthErrors } from '../oauth/errors.js';
import type { Db } from '../storage/db.js';
import { CLIENT_REGISTRATION_POLICIES, type McpSettingsRecord } from '../storage/repos/mcp-settings.js';
import { repos } from '../storage/repos/index.js';
import { MCP_SCOPES, mcpResource } from './resource.js';

/** Registrations per client IP address per hour, across instances (a tenant-wide flood limit). */
export const REGISTRATIONS_PER_IP_PER_HOUR = 20;
const HOUR_MS = 60 * 60 * 1000;

/** Scopes a registration may name: the tools' scopes and the OpenID ones every client may ask for. */
const REGISTRABLE_SCOPES = new Set<string>([...MCP_SCOPES, 'openid', 'profile', 'email', 'offline_access']);
const GRANTS = ['authorization_code', 'refresh_token'] as const;

/**
 * RFC 7591 §2 metadata Keyhall acts on. Other members (client_uri, logo_uri, software_id…) are
 * ignored and not echoed (RFC 7591 §3.2.1 allows it); values of the wrong type are refused.
 */
const registrationBody = z.looseObject({
  redirect_uris: z.array(z.string()).min(1, 'at least one redirect URI is required').max(10),
  client_name: z.string().min(1).max(200).optional(),
  token_endpoint_auth_method: z.literal('none', 'only public clients (none) may register').optional(),
  grant_types: z.array(z.enum(GRANTS, 'only authorization_code and refresh_token')).min(1).max(2).optional(),
  response_types: z.array(z.literal('code', 'only the code response type')).min(1).max(1).optional(),
  scope: z.string().max(1000).optional(),
  // OpenID Connect Back-Channel Logout 1.0 §2.2 (the client service checks the URI against the egress policy).
  backchannel_logout_uri: z.string().min(1).max(2048).optional(),
  backchannel_logout_session_required: z.boolean().optional(),
});

export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name?: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  scope: string;
  backchannel_logout_uri?: string;
  backchannel_logout_session_required?: boolean;
}

export interface McpSettingsView {
  client_registration: McpSettingsRecord['clientRegistration'];
  client_id_metadata_documents: boolean;
}

export const mcpSettingsBody = z.strictObject({
  client_registration: z.enum(CLIENT_REGISTRATION_POLICIES).optional(),
  client_id_metadata_documents: z.boolean().optional(),
});

export interface RegistrationDeps {
  db: Db;
  clock: Clock;
  clients: Pick<ClientService, 'create'>;
  /** The initial access token: an API key of this tenant (src/management/auth.ts). */
  authenticate(tenantId: string, authorization: string | undefined): Promise<Principal>;
}

const view = (s: McpSettingsRecord): McpSettingsView => ({
  client_registration: s.clientRegistration,
  client_id_metadata_documents: s.clientIdMetadataDocuments,
});

function parseRegistration(body: unknown) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw oauthErrors.invalidClientMetadata('the body must be a JSON object');
  const parsed = registrationBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || 'body';
    const message = `${where}: ${issue?.message ?? 'invalid'}`;
    throw issue?.path[0] === 'redirect_uris' ? oauthErrors.invalidRedirectUri(message) : oauthErrors.invalidClientMetadata(message);
  }
  const input = parsed.data;
  const grants = [...new Set(input.grant_types ?? GRANTS)];
  if (!grants.includes('authorization_code')) throw oauthErrors.invalidClientMetadata('grant_types: authorization_code is required');
  const requested = input.scope === undefined ? [] : input.scope.split(' ').filter(Boolean);
  const unknown = requested.filter((s) => !REGISTRABLE_SCOPES.has(s));
  if (unknown.length > 0) throw oauthErrors.invalidClientMetadata(`scope: not offered to registered clients: ${unknown.join(' ')}`);
  const toolScopes = requested.filter((s) => (MCP_SCOPES as readonly string[]).includes(s));
  return { input, grants, scopes: toolScopes.length > 0 ? toolScopes : [...MCP_SCOPES] };
}

export class McpRegistrationService {
  constructor(private readonly deps: RegistrationDeps) {}

  #repos() {
    return repos(this.deps.db.kysely, this.deps.db.dialect);
  }

  settingsRecord(tenantId: string): Promise<McpSettingsRecord> {
    return this.#repos().mcpSettings.get(tenantId);
  }

  async settings(tenantId: string): Promise<McpSettingsView> {
    return view(await this.settingsRecord(tenantId));
  }

  async putSettings(tenantId: string, input: z.infer<typeof mcpSettingsBody>): Promise<McpSettingsView> {
    const current = await this.settingsRecord(tenantId);
    const next: McpSettingsRecord = {
      clientRegistration: input.client_registration ?? current.clientRegistration,
      clientIdMetadataDocuments: input.client_id_metadata_documents ?? current.clientIdMetadataDocuments,
    };
    if (next.clientRegistration !== current.clientRegistration || next.clientIdMetadataDocuments !== current.clientIdMetadataDocuments) {
      await this.#repos().mcpSettings.put(tenantId, next, this.deps.clock.now());
    }
    return view(next);
  }

  /** Discovery members of the tenant's onboarding policy (RFC 7591 §3, CIMD draft §4). */
  async authorizationServerMetadata(tenantId: string, issuer: string): Promise<Record<string, unknown>> {
    const s = await this.settingsRecord(tenantId);
    return {
      ...(s.clientRegistration !== 'off' ? { registration_endpoint: `${issuer}/register` } : {}),
      client_id_metadata_document_supported: s.clientIdMetadataDocuments,
    };
  }

  /** The policy's gate: off → 403; initial_access_token → an API key holding `clients:register`. */
  async #admit(tenantId: string, authorization: string | undefined): Promise<string | null> {
    const policy = (await this.settingsRecord(tenantId)).clientRegistration;
    if (policy === 'off') throw new AppError(403, 'access_denied', 'dynamic client registration is turned off for this tenant');
    if (policy === 'open') return null;
    if (!authorization)
      throw new AppError(401, 'invalid_token', 'an initial access token is required (an API key with the clients:register permission)', {
        'www-authenticate': 'Bearer',
      });
    const principal = await this.deps.authenticate(tenantId, authorization);
    if (principal.organizationId !== null) throw errors.forbidden('the initial access token must be a platform API key');
    if (!principal.scopes.has('clients:register')) throw errors.insufficientScope('the initial access token needs the clients:register permission');
    return principal.keyId;
  }

  async register(tenant: { id: string; issuer: string }, body: unknown, req: { authorization: string | undefined; ip: string }): Promise<RegisteredClient> {
    const keyId = await this.#admit(tenant.id, req.authorization);
    const { input, grants, scopes } = parseRegistration(body);
    const waitMs = await this.#repos().rateLimits.hit(tenant.id, `register:${req.ip}`, REGISTRATIONS_PER_IP_PER_HOUR, HOUR_MS, this.deps.clock.now());
    if (waitMs > 0) throw errors.tooManyRequests(Math.ceil(waitMs / 1000));
    // The client service applies the rules of every client (redirect URIs, consistency) and
    // records the events in the transaction that creates the client.
    const actor: Actor = keyId ? { type: 'api_key', id: keyId } : { type: 'system', id: null };
    const created = await this.deps.clients.create(
      tenant.id,
      {
        ...(input.client_name !== undefined ? { client_name: input.client_name } : {}),
        redirect_uris: input.redirect_uris,
        grant_types: grants,
        token_endpoint_auth_method: 'none',
        scope: scopes.join(' '),
        allowed_resources: [mcpResource(tenant.issuer)],
        third_party: true,
        ...(input.backchannel_logout_uri !== undefined ? { backchannel_logout_uri: input.backchannel_logout_uri } : {}),
        ...(input.backchannel_logout_session_required !== undefined ? { backchannel_logout_session_required: input.backchannel_logout_session_required } : {}),
      },
      actor,
      (c) => ({
        tenantId: tenant.id,
        type: 'mcp.client.registered',
        organizationId: null,
        actor,
        data: { client_id: c.client_id, client_name: c.client_name, redirect_uris: c.redirect_uris, scope: c.scope, via: 'dynamic_registration' },
      }),
    );
    return {
      client_id: created.client_id,
      client_id_issued_at: created.client_id_issued_at,
      ...(created.client_name !== null ? { client_name: created.client_name } : {}),
      redirect_uris: created.redirect_uris,
      grant_types: created.grant_types,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: scopes.join(' '),
      ...(created.backchannel_logout_uri !== null
        ? { backchannel_logout_uri: created.backchannel_logout_uri, backchannel_logout_session_required: created.backchannel_logout_session_required }
        : {}),
    };
  }
}
