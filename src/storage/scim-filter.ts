/**
 * The storage side of SCIM filtering (src/scim/filter/parse.ts parses): translates a parsed
 * filter into a parameterised SQL condition over an allow-list of columns. Values are always
 * bound parameters and column names come only from the allow-list, so a filter can never inject
 * SQL; an attribute outside the list is 400 invalidFilter.
 */
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { type AttributeMap, type AttributeSpec, normalizePath } from '../scim/filter/attributes.js';
import type { CompareOp, FilterNode, Literal } from '../scim/filter/parse.js';
import { scimErrors } from '../scim/errors.js';

const bad = (detail: string) => scimErrors.invalidFilter(detail);

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * co / sw / ew of a case-exact attribute (id, externalId). LIKE would do on PostgreSQL, but
 * SQLite's LIKE ignores (ASCII) case, so these use forms that compare exactly on both:
 * `replace` (the value occurs iff removing it changes the text), and `substr` of the value's
 * length in characters (code points, as both databases count them; filter strings hold no
 * unpaired surrogates). An empty value matches every non-null value, like `LIKE '%'`.
 */
function caseExactMatch(ref: RawBuilder<unknown>, op: 'co' | 'sw' | 'ew', v: string): RawBuilder<SqlBool> {
  if (v === '') return sql<SqlBool>`${ref} is not null`;
  const n = [...v].length;
  switch (op) {
    case 'co':
      return sql<SqlBool>`replace(${ref}, ${v}, '') <> ${ref}`;
    case 'sw':
      return sql<SqlBool>`substr(${ref}, 1, ${n}) = ${v}`;
    case 'ew':
      return sql<SqlBool>`(length(${ref}) >= ${n} and substr(${ref}, length(${ref}) - ${n} + 1) = ${v})`;
  }
}

function stringCompare(spec: Extract<AttributeSpec, { kind: 'string' }>, op: CompareOp, value: Literal, path: string): RawBuilder<SqlBool> {
  if (typeof value !== 'string') throw bad(`'${path}' compares with a string`);
  const ref = sql.ref(spec.column);
  if (spec.caseExact && (op === 'co' || op === 'sw' || op === 'ew')) return caseExactMatch(ref, op, value);
  const lhs = spec.caseExact || spec.storedLower ? ref : sql`lower(${ref})`;
  const v = spec.caseExact ? value : value.toLowerCase();
  switch (op) {
    case 'eq':
      return sql<SqlBool>`${lhs} = ${v}`;
    case 'ne':
      return sql<SqlBool>`(${lhs} <> ${v} or ${ref} is null)`;
    case 'co':
      return sql<SqlBool>`${lhs} like ${`%${likeEscape(v)}%`} escape '\\'`;
    case 'sw':
      return sql<SqlBool>`${lhs} like ${`${likeEscape(v)}%`} escape '\\'`;
    case 'ew':
      return sql<SqlBool>`${lhs} like ${`%${likeEscape(v)}`} escape '\\'`;
    case 'gt':
      return sql<SqlBool>`${lhs} > ${v}`;
    case 'ge':
      return sql<SqlBool>`${lhs} >= ${v}`;
    case 'lt':
      return sql<SqlBool>`${lhs} < ${v}`;
    case 'le':
      return sql<SqlBool>`${lhs} <= ${v}`;
  }
}

const ORDER_OPS: Partial<Record<CompareOp, string>> = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' };

function compare(spec: AttributeSpec, op: CompareOp, value: Literal, path: string): RawBuilder<SqlBool> {
  switch (spec.kind) {
    case 'string':
      return stringCompare(spec, op, value, path);
    case 'boolean': {
      if (typeof value !== 'boolean') throw bad(`'${path}' compares with true or false`);
      if (op !== 'eq' && op !== 'ne') throw bad(`'${path}' supports eq, ne and pr`);
      const want = (op === 'eq') === value ? 1 : 0;
      return sql<SqlBool>`${sql.ref(spec.column)} = ${want}`;
    }
    case 'datetime': {
      const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
      if (!Number.isFinite(ms)) throw bad(`'${path}' compares with an RFC 3339 date-time`);
      if (op === 'ne') return sql<SqlBool>`${sql.ref(spec.column)} <> ${ms}`;
      const sqlOp = ORDER_OPS[op];
      if (!sqlOp) throw bad(`'${path}' supports eq, ne, gt, ge, lt, le and pr`);
      return sql<SqlBool>`${sql.ref(spec.column)} ${sql.raw(sqlOp)} ${ms}`;
    }
    case 'member': {
      if (op !== 'eq' || typeof value !== 'string') throw bad(`'${path}' supports eq with a user id, and pr`);
      return sql<SqlBool>`exists (select 1 from directory_group_members gm where gm.group_id = ${sql.ref(spec.groupColumn)} and gm.member_id = ${value})`;
    }
  }
}

function present(spec: AttributeSpec): RawBuilder<SqlBool> {
  switch (spec.kind) {
    case 'string':
      return sql<SqlBool>`(${sql.ref(spec.column)} is not null and ${sql.ref(spec.column)} <> '')`;
    case 'boolean':
    case 'datetime':
      return sql<SqlBool>`${sql.ref(spec.column)} is not null`;
    case 'member':
      return sql<SqlBool>`exists (select 1 from directory_group_members gm where gm.group_id = ${sql.ref(spec.groupColumn)})`;
  }
}

export interface FilterContext {
  attributes: AttributeMap;
  coreSchema: string;
}

/** Builds the SQL condition for a filter; throws 400 invalidFilter for anything unsupported. */
export function filterToSql(node: FilterNode, ctx: FilterContext, prefix = ''): RawBuilder<SqlBool> {
  const lookup = (path: string) => {
    const key = prefix + normalizePath(path, ctx.coreSchema);
    // Own keys only: a name such as `constructor` is not an attribute (Object's prototype has it).
    const own = (k: string) => (Object.hasOwn(ctx.attributes, k) ? ctx.attributes[k] : undefined);
    const spec = own(key) ?? own(`${key}.value`);
    if (!spec) throw bad(`the attribute '${path}' cannot be used in a filter`);
    return spec;
  };
  switch (node.kind) {
    case 'and':
      return sql<SqlBool>`(${filterToSql(node.left, ctx, prefix)} and ${filterToSql(node.right, ctx, prefix)})`;
    case 'or':
      return sql<SqlBool>`(${filterToSql(node.left, ctx, prefix)} or ${filterToSql(node.right, ctx, prefix)})`;
    case 'not':
      return sql<SqlBool>`not (${filterToSql(node.expr, ctx, prefix)})`;
    case 'compare':
      return compare(lookup(node.path), node.op, node.value, node.path);
    case 'present':
      return present(lookup(node.path));
    case 'valuePath': {
      if (prefix) throw bad('value filters cannot be nested');
      return filterToSql(node.filter, ctx, `${normalizePath(node.path, ctx.coreSchema)}.`);
    }
  }
}
