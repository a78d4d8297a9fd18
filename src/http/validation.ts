/**
 * The /v1 validator compiler: zod schemas check params, query and body, and the first problem
 * becomes one AppError whose description names the field as the client wrote it (`name`,
 * `limit`, `metadata.foo`, `redirect_uris[0]`) and says what is wrong in the client's terms —
 * `name: is required`, `limit: must be an integer from 1 to 100` — never zod's
 * "expected string, received undefined" or Fastify's "(in querystring)". A path parameter that
 * fails names nothing that exists: 404 (docs/api.md).
 */
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { errors } from '../kernel/errors.js';
import { fieldPath } from '../kernel/input.js';

type Issue = z.core.$ZodRawIssue;
type Part = 'body' | 'query' | 'params';

const KINDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
  date: 'a date',
};

function plural(n: number | bigint, one: string): string {
  return `${n} ${one}${Number(n) === 1 ? '' : 's'}`;
}

function bound(iss: Extract<Issue, { code: 'too_small' | 'too_big' }>): string {
  const limit = iss.code === 'too_small' ? iss.minimum : iss.maximum;
  const word = iss.code === 'too_small' ? (iss.inclusive === false ? 'more than' : 'at least') : iss.inclusive === false ? 'less than' : 'at most';
  switch (iss.origin) {
    case 'string':
      if (iss.code === 'too_small' && Number(limit) === 1) return 'must not be empty';
      return `must be ${word} ${plural(limit as number, 'character')} long`;
    case 'array':
    case 'set':
      if (iss.code === 'too_small' && Number(limit) === 1) return 'must not be empty';
      return `must have ${word} ${plural(limit as number, 'item')}`;
    case 'object':
    case 'record':
      return `must have ${word} ${plural(limit as number, 'member')}`;
    default:
      return `must be ${word} ${String(limit)}`;
  }
}

/** What is wrong, phrased as a predicate of the field (`is required`, `must be …`). */
function problemOf(iss: Issue): string {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'is required';
      return `must be ${KINDS[iss.expected] ?? iss.expected}`;
    case 'too_small':
    case 'too_big':
      return bound(iss);
    case 'invalid_format':
      if (iss.format === 'regex') return 'is not in the accepted format';
      if (iss.format === 'email') return 'must be an email address';
      if (iss.format === 'url') return 'must be a URL';
      return `must be a valid ${iss.format}`;
    case 'invalid_value':
      return iss.values.length === 1 ? `must be ${JSON.stringify(iss.values[0])}` : `must be one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(iss.divisor)}`;
    case 'invalid_key':
      return 'has a member name that is not accepted';
    case 'invalid_element':
      return 'has a value that is not accepted';
    case 'invalid_union':
      return 'is not in any accepted form';
    default:
      return 'is not valid';
  }
}

/** Used for every issue without a message of its own (schema messages are already predicates). */
const errorMap = (iss: Issue): string => problemOf(iss);

/** One sentence for the first issue: `<field>: <problem>`, or about the body as a whole. */
function describeIssue(issue: z.core.$ZodIssue, part: Part): string {
  const field = fieldPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((k) => fieldPath([...issue.path, k]));
    return names.length === 1 ? `${names[0]}: unknown field` : `${names.join(', ')}: unknown fields`;
  }
  if (field) return `${field}: ${issue.message}`;
  if (part === 'body') return issue.code === 'invalid_type' && issue.message === 'is required' ? 'a JSON body is required' : `the body ${issue.message}`;
  return issue.message;
}

const PARTS: Record<string, Part> = { body: 'body', querystring: 'query', params: 'params' };

export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const result = schema.safeParse(data, { error: errorMap });
    if (result.success) return { value: result.data };
    const part = PARTS[httpPart ?? ''] ?? 'body';
    const issue = result.error.issues[0]!;
    if (part === 'params') {
      // A path parameter names a resource: one that cannot exist is not found. The client wrote
      // a path segment, not a field name, so the segment is quoted (shortened) instead.
      const value = String((data as Record<string, unknown> | null)?.[String(issue.path[0])] ?? '');
      const shown = value.length > 64 ? `${value.slice(0, 64)}…` : value;
      return { error: errors.notFound(`no such resource: ${JSON.stringify(shown)} ${issue.message}`) };
    }
    return { error: errors.invalidRequest(describeIssue(issue, part)) };
  };
