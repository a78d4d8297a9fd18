/** The console's only server: same-origin /console/api (docs/console.md). */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
  }
}

let csrfToken = '';
/** The CSRF token every mutation sends in x-csrf-token (from GET /console/api/session or /setup). */
export const setCsrf = (token: string) => {
  csrfToken = token;
};

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  let r: Response;
  try {
    r = await fetch(`/console/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');
  }
  if (r.status === 204) return undefined as T;
  const data = (await r.json().catch(() => ({}))) as { error?: string; error_description?: string };
  if (!r.ok) throw new ApiError(r.status, data.error ?? 'error', data.error_description ?? `The request failed (HTTP ${r.status}).`);
  return data as T;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface Organization {
  id: string;
  name: string;
  slug: string | null;
  domain: string | null;
  status: string;
  brand_logo_url: string | null;
  brand_primary_color: string | null;
  brand_display_name: string | null;
  webauthn_aaguid_allowlist: string[] | null;
  created_at: string;
}

export interface User {
  id: string;
  email: string;
  name: string | null;
  email_verified: boolean;
  has_password: boolean;
  created_at: string;
}

export interface Passkey {
  id: string;
  name: string | null;
  aaguid: string;
  created_at: string;
  last_used_at: string | null;
}

export interface Member {
  organization_id: string;
  user_id: string;
  role: string;
  user?: { id: string; email: string; name: string | null };
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  organization_id: string | null;
  key_prefix: string;
  created_at: string;
  last_used_at: string | null;
}

export interface Webhook {
  endpoint_id: string;
  organization_id: string;
  url: string;
  events: string[];
  created_at: string;
}

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: Array<{ attempt: number; at: string; duration_ms: number; status_code: number | null; error: string | null }>;
  next_attempt_at: string | null;
  created_at: string;
}

export interface AuditEvent {
  id: string;
  type: string;
  organization_id: string | null;
  actor: { type: string; id: string | null };
  data: Record<string, unknown>;
  /** Seconds since the epoch. */
  created: number;
}

export const query = (params: Record<string, string | number | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};

/** Every organization (pages of 100), for pickers. */
export async function allOrganizations(): Promise<Organization[]> {
  const out: Organization[] = [];
  let after: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await api<Page<Organization>>('GET', `/organizations${query({ limit: 100, after })}`);
    out.push(...page.data);
    if (!page.has_more || !page.next_cursor) break;
    after = page.next_cursor;
  }
  return out;
}
