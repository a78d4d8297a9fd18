import type { Kysely } from 'kysely';
import type { Clock } from '../../kernel/clock.js';
import { sha256Hex } from '../../kernel/crypto/hash.js';
import { newId, newSecret } from '../../kernel/ids.js';
import type { ApiKeyRecord, ApiKeyRepo } from '../../storage/repos/api-keys.js';
import type { Database } from '../../storage/schema.js';
import type { Permission } from '../permissions.js';

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
  trx?: Kysely<Database>,
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
