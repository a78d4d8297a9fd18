/**
 * SCIM bearer tokens: `scim_` + 256 random bits (base64url), stored only as SHA-256, one per
 * directory connection. Authentication and the per-connection fixed-window rate limit are one
 * database statement, so revocation and limits hold across instances immediately.
 */
import type { Clock } from '../kernel/clock.js';
import { sha256Hex } from '../kernel/crypto/hash.js';
import type { AuthenticatedConnection, DirectoryConnectionRepo } from '../storage/repos/directory-connections.js';
import { scimErrors } from './errors.js';

export const SCIM_TOKEN_PREFIX = 'scim_';
const TOKEN_SHAPE = /^scim_[A-Za-z0-9_-]{43}$/;
export const RATE_WINDOW_MS = 60_000;

export async function authenticateScim(
  repo: DirectoryConnectionRepo,
  clock: Clock,
  tenantId: string,
  authorization: string | undefined,
): Promise<AuthenticatedConnection> {
  const token = /^Bearer +(\S+)$/i.exec(authorization?.trim() ?? '')?.[1];
  if (!token || !TOKEN_SHAPE.test(token)) throw scimErrors.unauthorized('a SCIM token is required: Authorization: Bearer scim_…');
  const now = clock.now();
  const windowStart = now - (now % RATE_WINDOW_MS);
  const conn = await repo.authenticate(tenantId, sha256Hex(token), windowStart);
  if (!conn) throw scimErrors.unauthorized('unknown or revoked SCIM token');
  if (conn.windowCount > conn.rateLimitPerMinute) {
    throw scimErrors.tooManyRequests(Math.max(1, Math.ceil((windowStart + RATE_WINDOW_MS - now) / 1000)));
  }
  return conn;
}

/** The SCIM bearer-token check bound to its repository and clock (built in src/context.ts). */
export class ScimAuth {
  constructor(
    private readonly connections: DirectoryConnectionRepo,
    private readonly clock: Clock,
  ) {}

  authenticate(tenantId: string, authorization: string | undefined): Promise<AuthenticatedConnection> {
    return authenticateScim(this.connections, this.clock, tenantId, authorization);
  }
}
