/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25):
 * a `client_id` that is a URL names the client's metadata, served at that URL. The document is
 * fetched through the egress agent (every address checked, no redirects; `http:` and loopback
 * only for addresses the operator allowlists), at most MAX_BYTES within TIMEOUT_MS, cached as
 * its Cache-Control says (bounded), and must name itself: its `client_id` equals the URL. Its
 * redirect URIs are the only ones the client may use. Such a client is public (PKCE), for
 * `<issuer>/mcp` only, third-party (consent), and kept as a row of oauth_clients whose id is the
 * URL (codes, consents and refresh tokens refer to it), refreshed from the document.
 */
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { EgressAgent } from '../egress/agent.js';
import { egressFetch, EgressFetchError } from '../egress/fetch.js';
import type { EgressPolicy } from '../egress/policy.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import { AppError } from '../kernel/errors.js';
import { redirectUri } from '../management/clients/schema.js';
import { DEFAULT_CLIENT_SETTINGS } from '../oauth/authorize/types.js';
import { type ClientRecord, type ClientStore, GRANT_TYPE } from '../oauth/types.js';
import { type Db, isUniqueViolation } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import { MCP_SCOPES, mcpResource } from './resource.js';

export const MAX_BYTES = 16 * 1024;
export const TIMEOUT_MS = 5_000;
/** Without Cache-Control the document is kept this long; never longer than MAX_TTL_S. */
const DEFAULT_TTL_S = 300;
const MAX_TTL_S = 24 * 60 * 60;
/** A failed fetch is remembered this long, so a bad client_id cannot make us fetch on every request. */
const FAILURE_TTL_S = 30;
const MAX_ENTRIES = 10_000;

/** A refused document: `invalid_client` with what is wrong (shown on the error page, never redirected). */
export const documentError = (description: string) => new AppError(400, 'invalid_client', `client metadata document: ${description}`);

/** Whether a client_id is a URL (a metadata document) rather than a registered id (`cli_…`). */
export const isDocumentClientId = (clientId: string): boolean => /^https?:\/\//i.test(clientId);

const documentSchema = z.looseObject({
  client_id: z.string(),
  client_name: z.string().min(1).max(200).optional(),
  redirect_uris: z.array(redirectUri).min(1).max(10),
  token_endpoint_auth_method: z.literal('none', 'only public clients (none) are accepted').optional(),
  grant_types: z
    .array(z.enum([GRANT_TYPE.authorizationCode, GRANT_TYPE.refreshToken], 'only authorization_code and refresh_token'))
    .min(1)
    .optional(),
  client_secret: z.never('a metadata document must not carry a client_secret').optional(),
});

export interface ClientDocument {
  clientName: string | null;
  redirectUris: string[];
  grantTypes: string[];
}

interface Entry {
  until: number;
  doc: Promise<ClientDocument>;
}

/** Seconds the response may be kept: Cache-Control no-store/no-cache → 0, max-age (bounded), else the default. */
export function cacheSeconds(cacheControl: string | string[] | undefined): number {
  const value = (Array.isArray(cacheControl) ? cacheControl.join(',') : (cacheControl ?? '')).toLowerCase();
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/.test(value)) return 0;
  const m = /(^|,)\s*max-age\s*=\s*"?(\d+)"?/.exec(value);
  if (m) return Math.min(Number(m[2]), MAX_TTL_S);
  return DEFAULT_TTL_S;
}

function parseDocument(url: string, text: string): ClientDocument {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw documentError('not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw documentError('not a JSON object');
  const parsed = documentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw documentError(`${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'}`);
  }
  if (parsed.data.client_id !== url) throw documentError('its client_id differs from the URL it was fetched from');
  const grants = [...new Set(parsed.data.grant_types ?? [GRANT_TYPE.authorizationCode, GRANT_TYPE.refreshToken])];
  if (!grants.includes(GRANT_TYPE.authorizationCode)) throw documentError('grant_types must include authorization_code');
  return { clientName: parsed.data.client_name ?? null, redirectUris: parsed.data.redirect_uris, grantTypes: grants };
}

/** Fetches and caches metadata documents (per instance; keyed by URL, shared by tenants). */
export class ClientDocuments {
  readonly #cache = new Map<string, Entry>();

  constructor(
    private readonly agent: EgressAgent,
    private readonly policy: EgressPolicy,
  ) {}

  get(url: string): Promise<ClientDocument> {
    const now = performance.now();
    const hit = this.#cache.get(url);
    if (hit && now < hit.until) return hit.doc;
    const entry: Entry = { until: now + FAILURE_TTL_S * 1000, doc: Promise.resolve() as unknown as Promise<ClientDocument> };
    entry.doc = this.#fetch(url).then(({ doc, ttlS }) => {
      entry.until = performance.now() + ttlS * 1000;
      return doc;
    });
    entry.doc.catch(() => undefined);
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.clear();
    this.#cache.set(url, entry);
    return entry.doc;
  }

  async #fetch(url: string): Promise<{ doc: ClientDocument; ttlS: number }> {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (!parsed || parsed.href !== url) throw documentError('the client_id is not a URL in normal form');
    if (parsed.hash || parsed.username || parsed.password) throw documentError('the client_id URL must not carry a fragment or credentials');
    if (parsed.pathname === '/') throw documentError('the client_id URL must have a path');
    // https, or http to an allowlisted address: the agent refuses the rest as it connects.
    let res;
    try {
      res = await egressFetch(this.agent, url, { headers: { accept: 'application/json' }, maxBytes: MAX_BYTES, timeoutMs: TIMEOUT_MS, policy: this.policy });
    } catch (err) {
      if (!(err instanceof EgressFetchError)) throw err;
      if (err.kind === 'too_large') throw documentError(`larger than ${MAX_BYTES} bytes`);
      if (err.kind === 'refused') throw documentError(err.message);
      throw documentError(`could not be fetched (${err.message})`);
    }
    if (res.status !== 200) throw documentError(`the URL answered ${res.status}`);
    return { doc: parseDocument(url, res.body.toString('utf8')), ttlS: cacheSeconds(res.headers.get('cache-control') ?? undefined) };
  }
}

export interface DocumentClientDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
  documents: ClientDocuments;
}

/**
 * The OAuth core's client store with metadata documents: a URL client_id is resolved from its
 * document (when the tenant allows documents), other ids by the registered-client store.
 */
export class DocumentClientStore implements ClientStore {
  constructor(
    private readonly registered: ClientStore,
    private readonly deps: DocumentClientDeps,
  ) {}

  async find(tenantId: string, clientId: string): Promise<ClientRecord | undefined> {
    if (!isDocumentClientId(clientId)) return this.registered.find(tenantId, clientId);
    const r = repos(this.deps.db.kysely, this.deps.db.dialect);
    if (!(await r.mcpSettings.get(tenantId)).clientIdMetadataDocuments) return undefined;
    const doc = await this.deps.documents.get(clientId);
    const tenant = await r.tenants.findById(tenantId);
    if (!tenant) return undefined;
    return this.#materialise(tenantId, tenant.issuer, clientId, doc);
  }

  /** The oauth_clients row of a document client, written when new or when the document changed. */
  async #materialise(tenantId: string, issuer: string, clientId: string, doc: ClientDocument): Promise<ClientRecord> {
    const r = repos(this.deps.db.kysely, this.deps.db.dialect);
    const current = await r.oauthClients.find(tenantId, clientId);
    const now = this.deps.clock.now();
    const wanted = {
      clientName: doc.clientName,
      redirectUris: doc.redirectUris,
      grantTypes: doc.grantTypes,
      authMethod: 'none' as const,
      allowedResources: [mcpResource(issuer)],
      scopes: [...MCP_SCOPES],
    };
    if (
      current &&
      isDeepStrictEqual(
        {
          clientName: current.clientName,
          redirectUris: current.redirectUris,
          grantTypes: current.grantTypes,
          authMethod: current.authMethod,
          allowedResources: current.allowedResources,
          scopes: current.scopes,
        },
        wanted,
      )
    ) {
      return current;
    }
    const record: ClientRecord = {
      id: clientId,
      tenantId,
      secretHash: null,
      authMethodStrict: false,
      allowedOrigins: [],
      jwks: null,
      jwksUri: null,
      dpopBound: false,
      tokenExchange: null,
      createdAt: current?.createdAt ?? now,
      secretRotatedAt: null,
      ...wanted,
      updatedAt: now,
    };
    try {
      await this.#write(tenantId, current !== undefined, record, doc, now);
    } catch (err) {
      // Another request materialised it first: theirs is the same document.
      const raced = isUniqueViolation(err) ? await r.oauthClients.find(tenantId, clientId) : undefined;
      if (!raced) throw err;
      return raced;
    }
    return record;
  }

  #write(tenantId: string, exists: boolean, record: ClientRecord, doc: ClientDocument, now: number): Promise<void> {
    const clientId = record.id;
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const t = repos(trx, this.deps.db.dialect);
      if (exists) await t.oauthClients.update(record);
      else {
        await t.oauthClients.insert(record);
        await t.signinStore.saveClientSettings(tenantId, clientId, { ...DEFAULT_CLIENT_SETTINGS, thirdParty: true }, now);
        await this.deps.events.record(trx, {
          tenantId,
          type: 'mcp.client.registered',
          organizationId: null,
          actor: { type: 'system', id: null },
          data: {
            client_id: clientId,
            client_name: doc.clientName,
            redirect_uris: doc.redirectUris,
            scope: MCP_SCOPES.join(' '),
            via: 'client_id_metadata_document',
          },
        });
      }
    });
  }
}
