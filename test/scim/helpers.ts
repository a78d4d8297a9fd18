import assert from 'node:assert/strict';
import type { HttpResponse } from '../helpers/http.js';
import type { TestServer } from '../helpers/server.js';
import { type Api, v1 } from '../helpers/v1.js';

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type Scim = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<HttpResponse>;

/** A SCIM client for one bearer token (the way Okta and Entra ID call: application/scim+json). */
export function scimClient(s: TestServer, token: string | undefined, host?: string): Scim {
  return (method, path, body, headers = {}) =>
    s.request({
      method,
      path: `/scim/v2${path}`,
      ...(host ? { host } : {}),
      headers: {
        accept: 'application/scim+json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
}

/** Asserts a SCIM error: status (as a string in the body too), scimType, the error schema and content type. */
export function expectScimError(r: HttpResponse, status: number, scimType?: string): void {
  let body: { schemas?: string[]; status?: string; scimType?: string } = {};
  try {
    body = r.json();
  } catch {
    // fall through to the assertion below
  }
  const ok = r.status === status && body.status === String(status) && body.schemas?.[0] === ERROR && body.scimType === scimType;
  if (!ok) throw new Error(`expected SCIM ${status} ${scimType ?? ''}, got ${r.status} ${r.text}`);
  assert.match(String(r.headers['content-type']), /^application\/scim\+json/);
}

export interface Directory {
  orgId: string;
  connectionId: string;
  token: string;
  scim: Scim;
  api: Api;
}

/** An organization (or the given one) with a directory connection and its SCIM token. */
export async function createDirectory(
  s: TestServer,
  opts: { orgId?: string; name?: string; group_roles?: Record<string, string>; rate_limit_per_minute?: number } = {},
): Promise<Directory> {
  const api = v1(s, s.tenant.platformApiKey);
  const orgId = opts.orgId ?? (await api('POST', '/organizations', { name: `Org ${Math.random()}` })).json().id;
  const { orgId: _o, ...input } = opts;
  const c = await api('POST', `/organizations/${orgId}/directory/connections`, { name: 'Directory', ...input });
  assert.equal(c.status, 201, c.text);
  const t = await api('POST', `/organizations/${orgId}/directory/scim_token`, { connection_id: c.json().id });
  assert.equal(t.status, 201, t.text);
  return { orgId, connectionId: c.json().id, token: t.json().token, scim: scimClient(s, t.json().token), api };
}

/** Events of one type in the organization (through /v1/events). */
export async function eventsOf(api: Api, orgId: string, types: string) {
  const r = await api('GET', `/events?organization_id=${orgId}&types=${types}&limit=100`);
  assert.equal(r.status, 200, r.text);
  return r.json().data as Array<{ type: string; actor: { type: string; id: string }; data: Record<string, unknown> }>;
}

export async function membersOf(api: Api, orgId: string) {
  const r = await api('GET', `/organizations/${orgId}/members?limit=100`);
  assert.equal(r.status, 200, r.text);
  return r.json().data as Array<{ user_id: string; role: string; user: { email: string; name: string | null } }>;
}

/**
 * Gives the organization a verified domain (manually, with the platform key): a directory links
 * existing users only in its organization's verified domain (docs/scim.md).
 */
export async function verifyDomain(api: Api, orgId: string, domain: string): Promise<void> {
  const patched = await api('PATCH', `/organizations/${orgId}`, { domain });
  assert.equal(patched.status, 200, patched.text);
  const verified = await api('POST', `/organizations/${orgId}/domain_verification`, { method: 'manual' });
  assert.equal(verified.status, 200, verified.text);
}
