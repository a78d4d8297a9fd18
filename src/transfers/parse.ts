/**
 * Import files → rows (docs/import-export.md). Framework-free and pure: each format's records
 * become ImportItems or a per-row rejection with a reason code, so one bad row (bad JSON, an
 * unknown hash format, a huge line, invalid UTF-8) never stops the rest. A file that cannot be
 * read at all (a whole-document JSON format that does not parse) is an ImportFileError.
 * Rejections never carry a hash or a password.
 */
import { type FirebaseHashConfig, firebaseStored, keycloakStored, normalizeImportedHash } from '../users/imported-hashes.js';
import { normalizeEmail } from '../users/emails.js';

export const IMPORT_FORMATS = ['auth0', 'firebase', 'keycloak', 'cognito', 'jsonl', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** Organization roles an import may give (as /v1/members). */
export const IMPORT_ROLES = ['admin', 'member'] as const;

/** A line of a line-based file longer than this is rejected unread. */
export const MAX_LINE_BYTES = 64 * 1024;

export interface ParseOptions {
  /** Firebase's project hash parameters; without them a Firebase user's password is rejected. */
  hashConfig?: FirebaseHashConfig;
  /** Accept the legacy salted SHA-256/512 formats. */
  allowLegacySha: boolean;
}

export interface UserItem {
  type: 'user';
  externalId: string;
  email: string;
  emailVerified: boolean;
  name: string | null;
  /** The hash to store (a form of imported-hashes.ts); undefined: the user keeps no / their current password. */
  passwordHash?: string;
  organizations: Array<{ externalId: string; name: string; slug: string | null; role: string }>;
}

export interface OrganizationItem {
  type: 'organization';
  externalId: string;
  name: string;
  slug: string | null;
}

export interface MemberItem {
  type: 'member';
  organizationExternalId: string;
  userExternalId: string;
  role: string;
}

/** A line Keyhall's own export writes that an import does not take (header, clients, resource servers). */
export interface SkippedItem {
  type: 'skipped';
}

export type ImportItem = UserItem | OrganizationItem | MemberItem | SkippedItem;

export interface Rejection {
  reason: string;
  detail?: string;
  externalId?: string;
  email?: string;
}

export type ParsedRow = { row: number; item: ImportItem } | { row: number; rejected: Rejection };

/** A file that cannot be read at all. */
export class ImportFileError extends Error {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(detail);
  }
}

class RowError extends Error {
  constructor(
    readonly reason: string,
    detail: string,
    readonly who: { externalId?: string; email?: string } = {},
  ) {
    super(detail);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const EMAIL = /^[^\s@"<>]{1,64}@[^\s@"<>]+\.[^\s@"<>]+$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(o: Obj, key: string, max = 1000): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') throw new RowError('invalid_row', `${key} must be a string`);
  if (v.length > max) throw new RowError('invalid_row', `${key} is longer than ${max} characters`);
  return v;
}

function boolOf(v: unknown): boolean {
  return v === true || v === 'true' || v === 'TRUE' || v === '1' || v === 1;
}

function emailOf(raw: string | undefined, externalId?: string): string {
  if (raw === undefined) throw new RowError('missing_email', 'the row has no email', { externalId });
  const email = normalizeEmail(raw);
  if (email.length > 254 || !EMAIL.test(email)) throw new RowError('invalid_email', 'the email is not an address', { externalId });
  return email;
}

function hashOf(raw: string | undefined, o: ParseOptions, who: { externalId?: string; email?: string }): string | undefined {
  if (raw === undefined) return undefined;
  const n = normalizeImportedHash(raw, { allowLegacy: o.allowLegacySha });
  if (!n.ok)
    throw new RowError(
      n.reason,
      n.reason === 'legacy_hash_not_allowed' ? 'salted SHA hashes need allow_legacy_sha' : 'the password hash is in no format Keyhall reads',
      who,
    );
  return n.stored;
}

function user(
  externalId: string | undefined,
  rawEmail: string | undefined,
  rest: { emailVerified: boolean; name?: string; passwordHash?: string; organizations?: UserItem['organizations'] },
): UserItem {
  if (externalId === undefined) throw new RowError('missing_external_id', 'the row has no id', { email: rawEmail });
  const email = emailOf(rawEmail, externalId);
  return {
    type: 'user',
    externalId,
    email,
    emailVerified: rest.emailVerified,
    name: rest.name ?? null,
    ...(rest.passwordHash !== undefined ? { passwordHash: rest.passwordHash } : {}),
    organizations: rest.organizations ?? [],
  };
}

function role(v: string | undefined): string {
  const r = v ?? 'member';
  if (!(IMPORT_ROLES as readonly string[]).includes(r)) throw new RowError('invalid_role', `role must be one of ${IMPORT_ROLES.join(', ')}`);
  return r;
}

/** Keyhall's own line format (also what an export writes). */
function fromJsonl(o: Obj, p: ParseOptions): ImportItem {
  const type = str(o, 'type') ?? 'user';
  if (type === 'header' || type === 'client' || type === 'resource_server') return { type: 'skipped' };
  if (type === 'organization') {
    const externalId = str(o, 'external_id') ?? str(o, 'id');
    const name = str(o, 'name', 200);
    if (externalId === undefined || name === undefined) throw new RowError('invalid_row', 'an organization needs id and name');
    return { type: 'organization', externalId, name, slug: str(o, 'slug', 100) ?? null };
  }
  if (type === 'member') {
    const org = str(o, 'organization_id');
    const u = str(o, 'user_id');
    if (org === undefined || u === undefined) throw new RowError('invalid_row', 'a member needs organization_id and user_id');
    return { type: 'member', organizationExternalId: org, userExternalId: u, role: role(str(o, 'role')) };
  }
  if (type !== 'user') throw new RowError('invalid_row', `unknown type ${type.slice(0, 40)}`);
  const externalId = str(o, 'external_id') ?? str(o, 'id');
  const who = { externalId, email: str(o, 'email', 320) };
  const orgs = o.organizations;
  if (orgs !== undefined && !Array.isArray(orgs)) throw new RowError('invalid_row', 'organizations must be an array', who);
  const organizations = (orgs ?? []).slice(0, 100).map((x) => {
    if (!isObj(x)) throw new RowError('invalid_row', 'each organization must be an object', who);
    const id = str(x, 'external_id') ?? str(x, 'id');
    const name = str(x, 'name', 200) ?? id;
    if (id === undefined || name === undefined) throw new RowError('invalid_row', 'each organization needs an id', who);
    return { externalId: id, name, slug: str(x, 'slug', 100) ?? null, role: role(str(x, 'role')) };
  });
  return user(externalId, who.email, {
    emailVerified: boolOf(o.email_verified),
    name: str(o, 'name', 200),
    passwordHash: hashOf(str(o, 'password_hash', 2048), p, who),
    organizations,
  });
}

/** Auth0's bulk password-hash export (NDJSON): `_id.$oid`, email, email_verified, passwordHash. */
function fromAuth0(o: Obj, p: ParseOptions): ImportItem {
  const id = isObj(o._id) ? str(o._id, '$oid') : str(o, '_id');
  const externalId = id ?? str(o, 'user_id');
  const who = { externalId, email: str(o, 'email', 320) };
  return user(externalId, who.email, {
    emailVerified: boolOf(o.email_verified),
    name: str(o, 'name', 200),
    passwordHash: hashOf(str(o, 'passwordHash', 2048), p, who),
  });
}

/** A Firebase `auth:export` user: localId, email, emailVerified, passwordHash + salt (base64). */
function fromFirebase(o: Obj, p: ParseOptions): ImportItem {
  const externalId = str(o, 'localId');
  const who = { externalId, email: str(o, 'email', 320) };
  const hash = str(o, 'passwordHash', 1024);
  const salt = str(o, 'salt', 1024);
  let stored: string | undefined;
  if (hash !== undefined) {
    if (!p.hashConfig) throw new RowError('hash_config_missing', "Firebase hashes need the project's hash parameters", who);
    if (salt === undefined) throw new RowError('unknown_hash_format', 'a Firebase hash without its salt', who);
    stored = hashOf(firebaseStored(hash, salt, p.hashConfig), p, who);
  }
  return user(externalId, who.email, { emailVerified: boolOf(o.emailVerified), name: str(o, 'displayName', 200), passwordHash: stored });
}

/** A Keycloak realm export's user: id, email, emailVerified, names, the password credential. */
function fromKeycloak(o: Obj, p: ParseOptions): ImportItem {
  const externalId = str(o, 'id');
  const who = { externalId, email: str(o, 'email', 320) };
  const name = [str(o, 'firstName', 100), str(o, 'lastName', 100)].filter(Boolean).join(' ') || undefined;
  let stored: string | undefined;
  const creds = Array.isArray(o.credentials) ? o.credentials.filter((c): c is Obj => isObj(c) && c.type === 'password') : [];
  const cred = creds[0];
  if (cred) {
    let secret: Obj;
    let data: Obj;
    try {
      secret = JSON.parse(str(cred, 'secretData', 4096) ?? '{}') as Obj;
      data = JSON.parse(str(cred, 'credentialData', 4096) ?? '{}') as Obj;
    } catch {
      throw new RowError('invalid_row', 'secretData / credentialData are not JSON', who);
    }
    const value = str(secret, 'value', 1024);
    const salt = str(secret, 'salt', 1024);
    const iterations = Number(data.hashIterations);
    const algorithm = str(data, 'algorithm') ?? '';
    const made = value && salt && Number.isInteger(iterations) ? keycloakStored(value, salt, iterations, algorithm) : undefined;
    if (!made) throw new RowError('unknown_hash_format', `Keycloak algorithm ${algorithm.slice(0, 40) || '(none)'} is not read`, who);
    stored = hashOf(made, p, who);
  }
  return user(externalId, who.email, { emailVerified: boolOf(o.emailVerified), name, passwordHash: stored });
}

/** A Cognito CSV row (the user pool's CSV header): sub or cognito:username, email, email_verified, name. No passwords (Cognito exports none). */
function fromCognito(o: Obj): ImportItem {
  const externalId = str(o, 'sub') ?? str(o, 'cognito:username');
  return user(externalId, str(o, 'email', 320), { emailVerified: boolOf(o.email_verified), name: str(o, 'name', 200) });
}

/** Keyhall's CSV: external_id, email, email_verified, name, password_hash. */
function fromCsv(o: Obj, p: ParseOptions): ImportItem {
  const externalId = str(o, 'external_id') ?? str(o, 'id');
  const who = { externalId, email: str(o, 'email', 320) };
  return user(externalId, who.email, {
    emailVerified: boolOf(o.email_verified),
    name: str(o, 'name', 200),
    passwordHash: hashOf(str(o, 'password_hash', 2048), p, who),
  });
}

/** The lines of a buffer, each with its 1-based number, split on \n (a trailing \r dropped). */
function* lines(data: Buffer): Generator<{ n: number; bytes: Buffer }> {
  let start = 0;
  let n = 0;
  while (start < data.length) {
    let end = data.indexOf(0x0a, start);
    if (end === -1) end = data.length;
    n += 1;
    let stop = end;
    if (stop > start && data[stop - 1] === 0x0d) stop -= 1;
    yield { n, bytes: data.subarray(start, stop) };
    start = end + 1;
  }
}

/** One line's text, or the reason it cannot be read. */
function lineText(bytes: Buffer): string {
  if (bytes.length > MAX_LINE_BYTES) throw new RowError('line_too_long', `the line is longer than ${MAX_LINE_BYTES} bytes`);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new RowError('invalid_utf8', 'the line is not valid UTF-8');
  }
}

function rejected(row: number, err: unknown): ParsedRow {
  if (err instanceof RowError) return { row, rejected: { reason: err.reason, detail: err.message, ...err.who } };
  throw err;
}

function* ndjson(data: Buffer, map: (o: Obj) => ImportItem): Generator<ParsedRow> {
  for (const { n, bytes } of lines(data)) {
    try {
      const text = lineText(bytes);
      if (text.trim() === '') continue;
      let o: unknown;
      try {
        o = JSON.parse(text);
      } catch {
        throw new RowError('invalid_json', 'the line is not JSON');
      }
      if (!isObj(o)) throw new RowError('invalid_row', 'the line is not a JSON object');
      yield { row: n, item: map(o) };
    } catch (err) {
      yield rejected(n, err);
    }
  }
}

/** One CSV line's fields (RFC 4180 quoting within the line). */
export function csvFields(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= line.length) throw new RowError('invalid_row', 'an unterminated quoted field');
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i += 1;
          break;
        }
        field += line[i];
        i += 1;
      }
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      field = line.slice(i, end);
      i = end;
    }
    out.push(field);
    if (i >= line.length) return out;
    if (line[i] !== ',') throw new RowError('invalid_row', 'text after a quoted field');
    i += 1;
  }
}

function* csv(data: Buffer, map: (o: Obj) => ImportItem): Generator<ParsedRow> {
  let header: string[] | undefined;
  for (const { n, bytes } of lines(data)) {
    try {
      const text = lineText(bytes).replace(/^\uFEFF/, '');
      if (text.trim() === '') continue;
      if (!header) {
        header = csvFields(text).map((h) => h.trim());
        if (!header.includes('email')) throw new ImportFileError('invalid_header', 'the CSV header names no email column');
        continue;
      }
      const values = csvFields(text);
      if (values.length !== header.length) throw new RowError('invalid_row', `${values.length} fields where the header has ${header.length}`);
      yield { row: n, item: map(Object.fromEntries(header.map((h, i) => [h, values[i]]))) };
    } catch (err) {
      if (err instanceof RowError && !header) throw new ImportFileError('invalid_header', 'the CSV header cannot be read');
      yield rejected(n, err);
    }
  }
  if (!header) throw new ImportFileError('invalid_header', 'the file has no CSV header');
}

/** A whole-document JSON file's `users` array. */
function* document(data: Buffer, map: (o: Obj) => ImportItem): Generator<ParsedRow> {
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    throw new ImportFileError('invalid_utf8', 'the file is not valid UTF-8');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ImportFileError('invalid_json', 'the file is not JSON');
  }
  const users = isObj(doc) ? doc.users : undefined;
  if (!Array.isArray(users)) throw new ImportFileError('invalid_json', 'the file has no users array');
  for (const [i, o] of users.entries()) {
    try {
      if (!isObj(o)) throw new RowError('invalid_row', 'the user is not a JSON object');
      yield { row: i + 1, item: map(o) };
    } catch (err) {
      yield rejected(i + 1, err);
    }
  }
}

/** The rows of an import file in the given format. */
export function parseImport(format: ImportFormat, data: Buffer, p: ParseOptions): Generator<ParsedRow> {
  switch (format) {
    case 'jsonl':
      return ndjson(data, (o) => fromJsonl(o, p));
    case 'auth0':
      return ndjson(data, (o) => fromAuth0(o, p));
    case 'firebase':
      return document(data, (o) => fromFirebase(o, p));
    case 'keycloak':
      return document(data, (o) => fromKeycloak(o, p));
    case 'cognito':
      return csv(data, fromCognito);
    case 'csv':
      return csv(data, (o) => fromCsv(o, p));
  }
}
