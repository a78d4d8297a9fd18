/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2–3): `post_logout_redirect_uri`
 * is followed only when it is registered for the client named by `id_token_hint` or `client_id`.
 */
import { redirectTo } from '../authorize/errors.js';
import type { SigninStore } from '../authorize/types.js';
import { verifyIdTokenHint } from '../id-token/verify-hint.js';
import type { KeySource } from '../tokens/access-token.js';
import type { ClientStore, OAuthTenant } from '../types.js';

export interface LogoutParams {
  idTokenHint?: string;
  clientId?: string;
  postLogoutRedirectUri?: string;
  state?: string;
}

export type LogoutTarget = { ok: true; clientId?: string; clientName?: string | null; redirect?: string } | { ok: false; description: string };

export async function resolveLogout(
  p: LogoutParams,
  tenant: OAuthTenant,
  deps: { keys: KeySource; clients: ClientStore; store: SigninStore },
): Promise<LogoutTarget> {
  let clientId = p.clientId;
  if (p.idTokenHint !== undefined) {
    const hint = await verifyIdTokenHint(p.idTokenHint, tenant, deps.keys);
    if (!hint) return { ok: false, description: 'id_token_hint is not an ID token issued here' };
    if (clientId !== undefined && clientId !== hint.clientId) return { ok: false, description: 'client_id does not match id_token_hint' };
    clientId = hint.clientId;
  }
  const client = clientId === undefined ? undefined : await deps.clients.find(tenant.id, clientId);
  if (clientId !== undefined && !client) return { ok: false, description: 'unknown client_id' };
  if (p.postLogoutRedirectUri === undefined) return { ok: true, clientId, clientName: client?.clientName ?? null };
  if (!client) return { ok: false, description: 'post_logout_redirect_uri needs id_token_hint or client_id' };
  const settings = await deps.store.clientSettings(tenant.id, client.id);
  if (!settings.postLogoutRedirectUris.includes(p.postLogoutRedirectUri))
    return { ok: false, description: 'post_logout_redirect_uri is not registered for this client' };
  return { ok: true, clientId, clientName: client.clientName, redirect: redirectTo(p.postLogoutRedirectUri, { state: p.state }) };
}
