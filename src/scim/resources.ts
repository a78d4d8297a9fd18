/**
 * SCIM resource shapes: input coercion through scimmy's User/Group schemas (types, required
 * attributes, read-only attributes dropped), output rendering, and attribute projection.
 */
import SCIMMY from 'scimmy';
import type { DirectoryGroupRecord, GroupMember } from '../storage/repos/directory-groups.js';
import type { DirectoryUserRecord } from '../storage/repos/directory-users.js';
import { scimErrors } from './errors.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

// scimmy's typings want a Schema instance; at run time it takes the class (as its docs show).
SCIMMY.Schemas.User.extend(SCIMMY.Schemas.EnterpriseUser as unknown as Parameters<typeof SCIMMY.Schemas.User.extend>[0]);

type Json = Record<string, unknown>;

const BOOLEAN_KEYS = new Set(['active', 'primary']);

/**
 * Entra ID has sent booleans as "True"/"False" strings; accept those for `active` and for
 * `primary` inside multi-valued attributes (emails, roles, …).
 */
export function normalizeBooleans<T>(value: T, depth = 0): T {
  if (depth > 3 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => normalizeBooleans(v, depth + 1)) as T;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      BOOLEAN_KEYS.has(k.toLowerCase()) && typeof v === 'string' && /^(true|false)$/i.test(v) ? v.toLowerCase() === 'true' : normalizeBooleans(v, depth + 1);
  }
  return out as T;
}

const plain = (o: unknown): Json => JSON.parse(JSON.stringify(o)) as Json;

/** Runs scimmy's schema coercion; its TypeErrors (wrong type, missing required) become invalidValue. */
function coerce(schema: typeof SCIMMY.Schemas.User | typeof SCIMMY.Schemas.Group, body: unknown): Json {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw scimErrors.invalidSyntax('the body must be a JSON object');
  try {
    const out = plain(new schema(normalizeBooleans(body as Json), 'in'));
    delete out.id;
    delete out.meta;
    delete out.password;
    return out;
  } catch (err) {
    throw scimErrors.invalidValue(err instanceof Error ? err.message : 'invalid resource');
  }
}

export interface UserFields {
  resource: Json;
  userName: string;
  externalId: string | null;
  displayName: string | null;
  givenName: string | null;
  familyName: string | null;
  email: string | null;
  emailType: string | null;
  active: boolean;
}

/** Indexed strings (userName, externalId, displayName, email, group names) are capped at this length. */
export const MAX_INDEXED_LENGTH = 512;

type Email = { value?: string; type?: string; primary?: boolean };

/** Extracts the indexed columns from a coerced User resource. */
export function userFields(resource: Json): UserFields {
  const userName = resource.userName;
  if (typeof userName !== 'string' || userName.trim() === '') throw scimErrors.invalidValue('userName is required');
  const name = (resource.name ?? {}) as { givenName?: string; familyName?: string };
  const emails = (Array.isArray(resource.emails) ? resource.emails : []) as Email[];
  const email = emails.find((e) => e.primary && e.value) ?? emails.find((e) => e.value);
  if (emails.filter((e) => e.primary).length > 1) throw scimErrors.invalidValue('only one email may be primary');
  for (const [key, value] of [
    ['userName', userName],
    ['externalId', resource.externalId],
    ['displayName', resource.displayName],
    ['email', email?.value],
  ] as const) {
    if (typeof value === 'string' && value.length > MAX_INDEXED_LENGTH) throw scimErrors.invalidValue(`${key} is longer than ${MAX_INDEXED_LENGTH} characters`);
  }
  return {
    resource,
    userName: userName.trim(),
    externalId: typeof resource.externalId === 'string' ? resource.externalId : null,
    displayName: typeof resource.displayName === 'string' ? resource.displayName : null,
    givenName: name.givenName ?? null,
    familyName: name.familyName ?? null,
    email: email?.value ? email.value.trim().toLowerCase() : null,
    emailType: email?.type ?? null,
    active: resource.active !== false,
  };
}

export const coerceUser = (body: unknown) => userFields(coerce(SCIMMY.Schemas.User, body));

/**
 * The most member values one request may list (a Group's `members` on POST/PUT, or all the
 * PatchOp operations' member values together, repeats included): larger is 400 invalidValue.
 * It keeps one request's statements within the databases' bound-parameter limits and its work
 * bounded; IdPs send members in batches far smaller (Entra ID and Okta: tens to hundreds).
 */
export const MAX_MEMBERS_PER_REQUEST = 1000;

export function checkMemberCount(n: number): void {
  if (n > MAX_MEMBERS_PER_REQUEST) {
    throw scimErrors.invalidValue(`at most ${MAX_MEMBERS_PER_REQUEST} members may be given in one request; send larger changes as several PATCH requests`);
  }
}

export function coerceGroup(body: unknown): { displayName: string; externalId: string | null; memberIds: string[] } {
  const raw = typeof body === 'object' && body !== null ? (body as { members?: unknown }).members : undefined;
  if (Array.isArray(raw)) checkMemberCount(raw.length);
  const g = coerce(SCIMMY.Schemas.Group, body);
  const displayName = typeof g.displayName === 'string' ? g.displayName.trim() : '';
  if (!displayName) throw scimErrors.invalidValue('displayName is required');
  if (displayName.length > MAX_INDEXED_LENGTH || (typeof g.externalId === 'string' && g.externalId.length > MAX_INDEXED_LENGTH)) {
    throw scimErrors.invalidValue(`displayName and externalId are at most ${MAX_INDEXED_LENGTH} characters`);
  }
  const members = (Array.isArray(g.members) ? g.members : []) as Array<{ value?: string }>;
  if (members.some((m) => typeof m.value !== 'string')) throw scimErrors.invalidValue('members[].value is required');
  return { displayName, externalId: typeof g.externalId === 'string' ? g.externalId : null, memberIds: [...new Set(members.map((m) => m.value as string))] };
}

export const etagOf = (version: number) => `W/"${version}"`;

/** A User as SCIM JSON; `groups` (read-only) is rendered only when given (single-resource reads). */
export function userToScim(u: DirectoryUserRecord, base: string, groups?: Array<{ id: string; displayName: string }>): Json {
  const { schemas: _s, id: _i, meta: _m, userName: _u, active: _a, groups: _g, ...rest } = u.resource;
  const hasEnterprise = Object.hasOwn(rest, ENTERPRISE_SCHEMA);
  return {
    schemas: hasEnterprise ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA],
    id: u.id,
    ...(u.externalId !== null ? { externalId: u.externalId } : {}),
    userName: u.userName,
    ...rest,
    active: u.active,
    ...(groups ? { groups: groups.map((g) => ({ value: g.id, display: g.displayName, $ref: `${base}/Groups/${g.id}`, type: 'direct' })) } : {}),
    meta: {
      resourceType: 'User',
      created: new Date(u.createdAt).toISOString(),
      lastModified: new Date(u.updatedAt).toISOString(),
      location: `${base}/Users/${u.id}`,
      version: etagOf(u.version),
    },
  };
}

export function groupToScim(g: DirectoryGroupRecord, base: string, members: GroupMember[]): Json {
  return {
    schemas: [GROUP_SCHEMA],
    id: g.id,
    ...(g.externalId !== null ? { externalId: g.externalId } : {}),
    displayName: g.displayName,
    members: members.map((m) => ({ value: m.id, display: m.displayName ?? m.userName, $ref: `${base}/Users/${m.id}`, type: 'User' })),
    meta: {
      resourceType: 'Group',
      created: new Date(g.createdAt).toISOString(),
      lastModified: new Date(g.updatedAt).toISOString(),
      location: `${base}/Groups/${g.id}`,
      version: etagOf(g.version),
    },
  };
}
