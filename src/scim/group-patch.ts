/**
 * PatchOp for Groups (RFC 7644 §3.5.2), turned into a list of changes applied in SQL. Accepts
 * the shapes Okta and Entra ID send: `members` add/remove with value arrays (Entra's remove with
 * a value list included), `members[value eq "…"]` removal, and path-less replace of displayName.
 */
import { scimErrors } from './errors.js';
import { parseFilter, type FilterNode } from './filter/parse.js';
import { normalizePath } from './filter/attributes.js';
import { checkMemberCount, GROUP_SCHEMA, MAX_INDEXED_LENGTH, PATCH_SCHEMA } from './resources.js';

export type GroupChange =
  | { kind: 'set'; id?: string; displayName?: string; externalId?: string | null }
  | { kind: 'members'; mode: 'add' | 'remove' | 'replace'; ids: string[] | 'all' };

type Op = 'add' | 'remove' | 'replace';

/** The distinct member ids of an operation's value (a list or one member). */
function memberIds(value: unknown, where: string): string[] {
  const list = Array.isArray(value) ? value : [value];
  checkMemberCount(list.length);
  const ids = list.map((m) => {
    const v = typeof m === 'object' && m !== null ? (m as { value?: unknown }).value : undefined;
    if (typeof v !== 'string' || v === '') throw scimErrors.invalidValue(`${where}: members need a string value`);
    return v;
  });
  return [...new Set(ids)];
}

/** `members[value eq "a" or value eq "b"]` → ["a", "b"]; anything else is invalidPath. */
function idsFromValueFilter(node: FilterNode): string[] {
  if (node.kind === 'or') return [...idsFromValueFilter(node.left), ...idsFromValueFilter(node.right)];
  if (node.kind === 'compare' && node.op === 'eq' && node.path.toLowerCase() === 'value' && typeof node.value === 'string') return [node.value];
  throw scimErrors.invalidPath('members filters support value eq "<id>" (joined with or)');
}

function stringValue(value: unknown, name: string, nullable: boolean): string | null {
  if (nullable && value === null) return null;
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_INDEXED_LENGTH) {
    throw scimErrors.invalidValue(`${name} must be a non-empty string of at most ${MAX_INDEXED_LENGTH} characters`);
  }
  return value.trim();
}

function pathless(op: Op, value: unknown, where: string): GroupChange[] {
  if (op === 'remove') throw scimErrors.noTarget(`${where}: remove needs a path`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw scimErrors.invalidValue(`${where}: value must be an object`);
  const set: Extract<GroupChange, { kind: 'set' }> = { kind: 'set' };
  const changes: GroupChange[] = [set];
  for (const [key, v] of Object.entries(value)) {
    const k = normalizePath(key, GROUP_SCHEMA);
    if (k === 'displayname') set.displayName = stringValue(v, 'displayName', false) as string;
    else if (k === 'externalid') set.externalId = stringValue(v, 'externalId', true);
    else if (k === 'id') set.id = typeof v === 'string' ? v : '';
    else if (k === 'members') changes.push({ kind: 'members', mode: op, ids: memberIds(v, where) });
    else if (k === 'schemas' || k === 'meta') continue;
    else throw scimErrors.invalidPath(`${where}: unknown attribute '${key}'`);
  }
  return changes;
}

function withPath(op: Op, rawPath: string, value: unknown, hasValue: boolean, where: string): GroupChange {
  const bracket = rawPath.indexOf('[');
  if (bracket > 0) {
    if (normalizePath(rawPath.slice(0, bracket), GROUP_SCHEMA) !== 'members' || !rawPath.endsWith(']'))
      throw scimErrors.invalidPath(`${where}: unsupported path '${rawPath}'`);
    if (op !== 'remove') throw scimErrors.invalidPath(`${where}: only remove may use a members filter`);
    let node: FilterNode;
    try {
      node = parseFilter(rawPath.slice(bracket + 1, -1));
    } catch {
      throw scimErrors.invalidPath(`${where}: invalid members filter`);
    }
    return { kind: 'members', mode: 'remove', ids: idsFromValueFilter(node) };
  }
  const path = normalizePath(rawPath, GROUP_SCHEMA);
  switch (path) {
    case 'members':
      if (op === 'remove') return { kind: 'members', mode: 'remove', ids: hasValue ? memberIds(value, where) : 'all' };
      return { kind: 'members', mode: op, ids: memberIds(value, where) };
    case 'displayname':
      if (op === 'remove') throw scimErrors.invalidValue(`${where}: displayName is required`);
      return { kind: 'set', displayName: stringValue(value, 'displayName', false) as string };
    case 'externalid':
      return { kind: 'set', externalId: op === 'remove' ? null : stringValue(value, 'externalId', false) };
    case 'id':
    case 'meta':
    case 'meta.created':
    case 'meta.lastmodified':
      throw scimErrors.mutability(`${where}: '${rawPath}' is read-only`);
    default:
      throw scimErrors.invalidPath(`${where}: unknown path '${rawPath}'`);
  }
}

export function groupPatchChanges(body: unknown): GroupChange[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw scimErrors.invalidSyntax('the body must be a PatchOp object');
  const { schemas, Operations } = body as { schemas?: unknown; Operations?: unknown };
  if (!Array.isArray(schemas) || schemas.length !== 1 || schemas[0] !== PATCH_SCHEMA) throw scimErrors.invalidSyntax(`schemas must be ["${PATCH_SCHEMA}"]`);
  if (!Array.isArray(Operations) || Operations.length === 0) throw scimErrors.invalidValue('Operations must list at least one operation');
  const changes = Operations.flatMap((raw: unknown, i: number) => {
    const where = `operation ${i + 1}`;
    if (typeof raw !== 'object' || raw === null) throw scimErrors.invalidSyntax(`${where} must be an object`);
    const { op, path, value } = raw as { op?: unknown; path?: unknown; value?: unknown };
    const name = typeof op === 'string' ? op.toLowerCase() : '';
    if (name !== 'add' && name !== 'remove' && name !== 'replace') throw scimErrors.invalidSyntax(`${where}: op must be add, remove or replace`);
    if (path !== undefined && typeof path !== 'string') throw scimErrors.invalidPath(`${where}: path must be a string`);
    if (name !== 'remove' && value === undefined) throw scimErrors.invalidValue(`${where}: value is required`);
    if (path === undefined || path === '') return pathless(name, value, where);
    return [withPath(name, path, value, value !== undefined, where)];
  });
  // The cap holds for the request as a whole, not only for each operation.
  checkMemberCount(changes.reduce((n, c) => n + (c.kind === 'members' && c.ids !== 'all' ? c.ids.length : 0), 0));
  return changes;
}
