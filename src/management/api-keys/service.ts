import type { Actor } from '../../events/catalogue.js';
import type { Executor } from '../../storage/db.js';
import type { Clock } from '../../kernel/clock.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { newId, newSecret } from '../../kernel/ids.js';
import { errors } from '../../kernel/errors.js';
import type { ApiKeyRecord, ApiKeyRepo } from '../../storage/repos/api-keys.js';
import type { Principal } from '../principal.js';
import { type ManagementDeps, reposOf } from '../common.js';
import { FULL_PRIVILEGE_ONLY, holdsEveryPermission, isPermission, type Permission } from '../permissions.js';

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
    const scopes = checkScopes(input.scopes, organizationId);
    if (organizationId === null && caller.organizationId !== null) {
      throw errors.insufficientScope('an organization-bound key cannot mint a platform-bound key');
    }
    const missing = scopes.filter((s) => !caller.scopes.has(s));
    if (missing.length) throw errors.insufficientScope(`the calling key does not hold: ${missing.join(', ')}`);
    return this.#mint(caller.tenantId, organizationId, { name: input.name, scopes }, caller.actor);
  }

  /**
   * Mints a key for an operator at the command line (`keyhall api-keys create`): no calling key,
   * so no privilege ceiling; audited as `api_key.created` with the `system` actor.
   */
  createAsOperator(tenantId: string, organizationId: string | null, input: { name: string; scopes: string[] }): Promise<MintedApiKey> {
    return this.#mint(tenantId, organizationId, { name: input.name, scopes: checkScopes(input.scopes, organizationId) }, { type: 'system', id: null });
  }

  #mint(tenantId: string, organizationId: string | null, input: { name: string; scopes: Permission[] }, actor: Actor): Promise<MintedApiKey> {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (organizationId !== null && !(await r.organizations.findShared(tenantId, organizationId, this.deps.db.dialect))) {
        throw errors.notFound('organization not found');
      }
      const minted = await mintApiKey(r.apiKeys, this.deps.clock, { tenantId, organizationId, name: input.name, scopes: input.scopes });
      await this.deps.events.record(trx, {
        tenantId,
        type: 'api_key.created',
        organizationId,
        actor,
        data: { key_id: minted.record.id, name: minted.record.name, scopes: minted.record.scopes },
      });
      return minted;
    });
  }

  /**
   * Whether the actor holds every permission, read from the key itself rather than taken from the
   * caller: an API key only when it is platform-bound with the whole catalogue. A console
   * administrator acts with every permission, and so does Keyhall itself (the setup link, where
   * the new administrator chooses the password, and the command line).
   */
  async holdsEveryPermission(tenantId: string, actor: Actor): Promise<boolean> {
    if (actor.type !== 'api_key') return actor.type === 'user' || actor.type === 'system';
    const key = actor.id === null ? undefined : await this.repo.find(tenantId, actor.id);
    return !!key && holdsEveryPermission(key);
  }

  list(tenantId: string, organizationId: string | null, after: string | undefined, limit: number) {
    return this.repo.list(tenantId, organizationId, after, limit);
  }

  /**
   * Revokes a key. The tenant's last live platform key holding `api_keys:write` is never revoked
   * (409 conflict): without it nobody could mint keys over /v1. The check runs in the revoking
   * transaction after the tenant row is locked, so two parallel revocations of the last two such
   * keys cannot both succeed.
   */
  async revoke(caller: Principal, organizationId: string | null, keyId: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (organizationId === null) await r.tenants.lock(caller.tenantId);
      const revoked = await r.apiKeys.revoke(caller.tenantId, organizationId, keyId, this.deps.clock.now());
      if (!revoked) throw errors.notFound('API key not found');
      if (
        organizationId === null &&
        revoked.scopes.includes(ADMIN_SCOPE) &&
        (await r.apiKeys.livePlatformKeysHolding(caller.tenantId, ADMIN_SCOPE)).length === 0
      ) {
        throw errors.conflict(
          `this is the last platform API key holding ${ADMIN_SCOPE}; mint another first (POST /v1/api_keys, or \`keyhall api-keys create --tenant <id|host>\` on the server)`,
        );
      }
      await this.deps.events.record(trx, {
        tenantId: caller.tenantId,
        type: 'api_key.revoked',
        organizationId,
        actor: caller.actor,
        data: { key_id: keyId, name: revoked.name },
      });
    });
  }
}

/** The scope that lets a key mint keys: a tenant always keeps one live platform key holding it. */
const ADMIN_SCOPE: Permission = 'api_keys:write';

/**
 * Unknown permission → 400 invalid_scope; duplicates dropped. A full-privilege-only permission
 * (`domains:verify`) on a key that is org-bound or lacks any other permission → 400 invalid_scope.
 */
function checkScopes(scopes: string[], organizationId: string | null): Permission[] {
  const unknown = scopes.filter((s) => !isPermission(s));
  if (unknown.length) throw errors.invalidScope(`unknown permission: ${unknown.join(', ')}`);
  const reserved = FULL_PRIVILEGE_ONLY.filter((p) => scopes.includes(p));
  if (reserved.length && !holdsEveryPermission({ organizationId, scopes })) {
    throw errors.invalidScope(`${reserved.join(', ')} can only be held by a platform key that holds every permission`);
  }
  return [...new Set(scopes)] as Permission[];
}
