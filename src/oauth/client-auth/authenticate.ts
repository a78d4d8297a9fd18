/** Client authentication at /token, /introspect and /revoke (RFC 6749 §2.3, RFC 7523). */
import { sha256Hex, safeEqual } from '../../kernel/crypto/hash.js';
import { oauthErrors } from '../errors.js';
import type { ClientRecord, ClientStore, OAuthHttpRequest, OAuthTenant, RemoteKeySource, ReplayCache } from '../types.js';
import type { ClientProfile } from '../authorize/types.js';
import { isFapi2 } from '../profile.js';
import { assertionClientId, verifyClientAssertion } from './assertion.js';
import { presentedCredentials, usesSecret } from './presented.js';

export interface ClientAuthDeps {
  clients: ClientStore;
  replay: ReplayCache;
  now: number;
  /** Fetches keys of clients registered with `jwks_uri`. */
  remoteKeys?: RemoteKeySource | undefined;
  /** A client's security profile: a FAPI 2.0 client's assertion names the issuer alone as `aud`. */
  clientProfile?: ((tenantId: string, clientId: string) => Promise<ClientProfile | null>) | undefined;
}

/** The client-authentication ports out of the token service's dependencies. */
export function clientAuthDeps(
  deps: { clients: ClientStore; replay: ReplayCache; remoteKeys?: RemoteKeySource | undefined; clientProfile?: ClientAuthDeps['clientProfile'] },
  now: number,
): ClientAuthDeps {
  return { clients: deps.clients, replay: deps.replay, remoteKeys: deps.remoteKeys, clientProfile: deps.clientProfile, now };
}

/** A hash compared when the client is unknown, so both paths cost the same. */
const DUMMY_HASH = sha256Hex('keyhall:no-such-client');

function checkSecret(client: ClientRecord | undefined, secret: string): void {
  const ok = safeEqual(sha256Hex(secret), client?.secretHash ?? DUMMY_HASH);
  if (!client || !client.secretHash || !ok) throw oauthErrors.invalidClient('client authentication failed');
}

function checkRegisteredMethod(client: ClientRecord, method: string): void {
  if (client.authMethod !== method) throw oauthErrors.invalidClient(`client is not registered for ${method}`);
}

/**
 * A secret client may send its secret by either secret method (Basic or in the body) unless it
 * registered strict matching; `none` and assertions stay refused (docs/oauth.md).
 */
function checkSecretMethod(client: ClientRecord, method: 'client_secret_basic' | 'client_secret_post'): void {
  if (client.authMethodStrict || !usesSecret(client.authMethod)) checkRegisteredMethod(client, method);
}

/** Returns the authenticated client, or throws `invalid_client` / `invalid_request`. */
export async function authenticateClient(req: OAuthHttpRequest, tenant: OAuthTenant, deps: ClientAuthDeps): Promise<ClientRecord> {
  const presented = presentedCredentials(req);
  const clientId = presented.method === 'private_key_jwt' ? assertionClientId(presented.assertion, presented.clientId) : presented.clientId;
  const client = await deps.clients.find(tenant.id, clientId);
  switch (presented.method) {
    case 'client_secret_basic':
    case 'client_secret_post':
      checkSecret(client, presented.secret);
      checkSecretMethod(client!, presented.method);
      return client!;
    case 'private_key_jwt':
      if (!client) throw oauthErrors.invalidClient('client authentication failed');
      checkRegisteredMethod(client, presented.method);
      await verifyClientAssertion(presented.assertion, client, tenant, {
        ...deps,
        issuerAudienceOnly: isFapi2(await deps.clientProfile?.(tenant.id, client.id)),
      });
      return client;
    case 'none':
      if (!client) throw oauthErrors.invalidClient('client authentication failed');
      checkRegisteredMethod(client, presented.method);
      return client;
  }
}
