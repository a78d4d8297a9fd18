import type { Executor } from '../../storage/db.js';
import type { Clock } from '../../kernel/clock.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { newId, newSecret } from '../../kernel/ids.js';
import { errors } from '../../kernel/errors.js';
import type { ApiKeyRecord, ApiKeyRepo } from '../../storage/repos/api-keys.js';
import type { Principal } from '../auth.js';
import { type ManagementDeps, reposOf } from '../common.js';
import { isPermission, type Permission } from '../permissions.js';

export const API_KEY_PREFIX = 'sk_live_';
/** How much of a key is kept in clear to help people tell keys apart (prefix + 4 characters). */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;

export interface MintedApiKey {
  record: ApiKeyRecord;
  /** The full secret: returned once, never stored. */
  key: string;
}

/** Creates an API key; only the SHA-256 of the secret is stored. */
export async function mintApiKey(
  repo: ApiKeyRepo,
  clock: Clock,
  input: { tenantId: string; organizationId: string | null; name: string; scopes: readonly Permission[] },
  trx?: Executor,
): Promise<MintedApiKey> {
  const key = newSecret(API_KEY_PREFIX);
  const now = clock.now();
  const record: ApiKeyRecord = {
    id: newId('key', now),
    tenantId: input.tenantId,
    organizationId: input.organizationId,
    name: input.name,
    scopes: [...input.scopes],
    keyHash: sha256Hex(key),
    keyPrefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  await repo.insert(record, trx);
  return { record, key };
}

export function apiKeyView(k: ApiKeyRecord) {
  return {
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    organization_id: k.organizationId,
    key_prefix: k.keyPrefix,
    created_at: new Date(k.createdAt).toISOString(),
    last_used_at: k.lastUsedAt === null ? null : new Date(k.lastUsedAt).toISOString(),
  };
}

export class ApiKeyService {
  constructor(
    private readonly deps: ManagementDeps,
    private readonly repo: ApiKeyRepo,
  ) {}

  /**
   * Mints a key at or below the caller's own privilege: unknown scope → 400 invalid_scope; an
   * org-bound caller minting a platform key, or asking for a scope it does not hold → 403
   * insufficient_scope.
   */
  async create(caller: Principal, organizationId: string | null, input: { name: string; scopes: string[] }): Promise<MintedApiKey> {
    const unknown = input.scopes.filter((s) => !isPermission(s));
    if (unknown.length) throw errors.invalidScope(`unknown permission: ${unknown.join(', ')}`);
    const scopes = [...new Set(input.scopes)] as Permission[];
    if (organizationId === null && caller.organizationId !== null) {
      throw errors.insufficientScope('an organization-bound key cannot mint a platform-bound key');
    }
    const missing = scopes.filter((s) => !caller.scopes.has(s));
    if (missing.length) throw errors.insufficientScope(`the calling key does not hold: ${missing.join(', ')}`);
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (organizationId !== null && !(await r.organizations.findShared(caller.tenantId, organizationId, this.deps.db.dialect))) {
        throw errors.notFound('organization not found');
      }
      const minted = await mintApiKey(r.apiKeys, this.deps.clock, {
        tenantId: caller.tenantId,
        organizationId,
        name: input.name,
        scopes,
      });
      await this.deps.events.record(trx, {
        tenantId: caller.tenantId,
        type: 'api_key.created',
        organizationId,
        actor: { type: 'api_key', id: caller.keyId },
        data: { key_id: minted.record.id, name: minted.record.name, scopes: minted.record.scopes },
      });
      return minted;
    });
  }

  list(tenantId: string, organizationId: string | null, after: string | undefined, limit: number) {
    return this.repo.list(tenantId, organizationId, after, limit);
  }

  async revoke(caller: Principal, organizationId: string | null, keyId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const revoked = await reposOf(this.deps, trx).apiKeys.revoke(caller.tenantId, organizationId, keyId, this.deps.clock.now());
      if (!revoked) throw errors.notFound('API key not found');
      await this.deps.events.record(trx, {
        tenantId: caller.tenantId,
        type: 'api_key.revoked',
        organizationId,
        actor: { type: 'api_key', id: caller.keyId },
        data: { key_id: keyId, name: revoked.name },
      });
    });
  }
}
