/**
 * The storage contract suite calls repositories directly (through `repos()`), on a fresh database
 * of the suite's dialect: a SQLite file in a temp dir, or a new PostgreSQL database when
 * KEYHALL_TEST_DB=postgres. One database per test file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Db, migrate, openDatabase } from '../../src/storage/db.js';
import type { ApiKeyRecord } from '../../src/storage/repos/api-keys.js';
import { type Repos, repos } from '../../src/storage/repos/index.js';
import type { OrganizationRecord } from '../../src/storage/repos/organizations.js';
import type { UserRecord } from '../../src/storage/repos/users.js';
import type { WebhookEndpointRecord } from '../../src/storage/repos/webhook-endpoints.js';
import type { ClientRecord } from '../../src/oauth/types.js';
import { freshPostgresDatabase, onPostgres } from '../helpers/db.js';

export interface StorageDb {
  db: Db;
  /** Repositories over the root database. */
  r: Repos;
  close(): Promise<void>;
}

export async function openStorage(): Promise<StorageDb> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyhall-storage-'));
  const pg = onPostgres ? await freshPostgresDatabase() : undefined;
  const db = openDatabase({ dataDir, databaseUrl: pg?.url });
  await migrate(db);
  return {
    db,
    r: repos(db.kysely, db.dialect),
    close: async () => {
      await db.close();
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let counter = 0;
/** A unique id with a prefix, sorting in creation order within one test file. */
export const uid = (prefix: string) => `${prefix}_${String(++counter).padStart(6, '0')}`;

/** N calls of `fn` started together; their results in call order. */
export const parallel = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

export async function tenant(r: Repos): Promise<string> {
  const id = uid('ten');
  await r.tenants.insert({ id, host: `${id}.example`, issuer: `https://${id}.example`, createdAt: 0 });
  return id;
}

export async function organization(r: Repos, tenantId: string, over: Partial<OrganizationRecord> = {}): Promise<OrganizationRecord> {
  const o: OrganizationRecord = {
    id: uid('org'),
    tenantId,
    name: 'Acme',
    slug: null,
    domain: null,
    did: null,
    status: 'active',
    brandLogoUrl: null,
    brandPrimaryColor: null,
    brandDisplayName: null,
    webauthnAaguidAllowlist: null,
    domainVerifiedAt: null,
    ssoRequired: false,
    createdAt: 1,
    updatedAt: 1,
    ...over,
  };
  await r.organizations.insert(o);
  return o;
}

export async function user(r: Repos, tenantId: string, over: Partial<UserRecord> = {}): Promise<UserRecord> {
  const id = over.id ?? uid('user');
  const u: UserRecord = {
    id,
    tenantId,
    email: `${id}@example.com`,
    name: null,
    emailVerified: false,
    passwordHash: null,
    passwordSetBy: null,
    createdAt: 1,
    updatedAt: 1,
    metadata: {},
    privateMetadata: {},
    ...over,
  };
  await r.users.insert(u);
  return u;
}

export async function client(r: Repos, tenantId: string, over: Partial<ClientRecord> = {}): Promise<ClientRecord> {
  const c: ClientRecord = {
    id: uid('cli'),
    tenantId,
    clientName: null,
    secretHash: null,
    authMethod: 'none',
    authMethodStrict: false,
    grantTypes: ['authorization_code'],
    redirectUris: ['https://app.example/cb'],
    allowedResources: [],
    allowedOrigins: [],
    scopes: ['openid'],
    jwks: null,
    jwksUri: null,
    dpopBound: false,
    tokenExchange: null,
    createdAt: 1,
    updatedAt: 1,
    secretRotatedAt: null,
    organizationGrant: null,
    ...over,
  };
  await r.oauthClients.insert(c);
  return c;
}

export async function apiKey(r: Repos, tenantId: string, organizationId: string | null): Promise<ApiKeyRecord> {
  const id = uid('key');
  const k: ApiKeyRecord = {
    id,
    tenantId,
    organizationId,
    name: 'k',
    scopes: ['organizations:read'],
    keyHash: `hash-${id}`,
    keyPrefix: 'sk_live_abcd',
    createdAt: 1,
    lastUsedAt: null,
    revokedAt: null,
  };
  await r.apiKeys.insert(k);
  return k;
}

export async function endpoint(r: Repos, tenantId: string, organizationId: string): Promise<WebhookEndpointRecord> {
  const e: WebhookEndpointRecord = {
    id: uid('we'),
    tenantId,
    organizationId,
    url: 'https://hooks.example/in',
    events: ['*'],
    secretEnc: 'enc',
    createdAt: 1,
    updatedAt: 1,
  };
  await r.webhookEndpoints.insert(e);
  return e;
}
