/**
 * Finishes the /v1 OpenAPI document that @fastify/swagger builds from the zod route schemas:
 * operationIds and success descriptions from OPERATIONS, the error responses every operation
 * can give (shared components with the Error schema), security, tags and examples. Plain JSON
 * in, JSON out: the Fastify wiring is in ../v1.ts.
 */
import { EXAMPLES } from './examples.js';
import { OPERATIONS, TAGS } from './operations.js';

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

const errorExample = (error: string, error_description: string) => ({ value: { error, error_description } });

/** One shared response per error status, named as in components.responses. */
const ERROR_RESPONSES: Record<number, { name: string; description: string; headers?: Json; examples: Record<string, unknown> }> = {
  400: {
    name: 'BadRequest',
    description: 'The request is invalid: `invalid_request` names the field and what is wrong with it (`invalid_scope` for an unknown scope)',
    examples: { invalid_request: errorExample('invalid_request', 'name: must not be empty') },
  },
  401: {
    name: 'Unauthorized',
    description: 'No API key, or a malformed, unknown or revoked one',
    headers: { 'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750 §3)', schema: { type: 'string' } } },
    examples: { invalid_token: errorExample('invalid_token', 'unknown or revoked API key') },
  },
  403: {
    name: 'Forbidden',
    description:
      'The key may not do this: `forbidden` when it is bound to another organization (or the route is tenant-wide), `insufficient_scope` when it lacks the permission',
    examples: {
      forbidden: errorExample('forbidden', 'this API key is bound to another organization'),
      insufficient_scope: errorExample('insufficient_scope', 'this route needs the organizations:write permission'),
    },
  },
  404: {
    name: 'NotFound',
    description: 'No such resource in this tenant (or a malformed id)',
    examples: { not_found: errorExample('not_found', 'organization not found') },
  },
  409: {
    name: 'Conflict',
    description: 'The request conflicts with the current state (a taken slug or email, an existing membership, the last key that can mint keys)',
    examples: { conflict: errorExample('conflict', 'slug is already taken') },
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'The body is larger than the server accepts (KEYHALL_BODY_LIMIT)',
    examples: { request_too_large: errorExample('request_too_large', 'The request body is too large') },
  },
  415: {
    name: 'UnsupportedMediaType',
    description: 'The body is not `application/json`',
    examples: { unsupported_media_type: errorExample('unsupported_media_type', 'the body must be application/json') },
  },
  429: {
    name: 'TooManyRequests',
    description: "The key's per-minute request limit is used up",
    headers: { 'Retry-After': { description: 'Seconds until the limit resets', schema: { type: 'integer' } } },
    examples: { rate_limited: errorExample('rate_limited', 'too many requests; retry later') },
  },
};

/** The `METHOD /path` key of an operation, as OPERATIONS and EXAMPLES use it. */
export const operationKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** The error statuses an operation can answer: shared by all, by shape, declared, and listed. */
function errorStatuses(op: Json, declared: number[], listed: readonly number[]): number[] {
  const params = (op.parameters as { in: string }[] | undefined) ?? [];
  const statuses = new Set<number>([401, 403, 429, ...declared, ...listed]);
  if (op.requestBody) [400, 413, 415].forEach((s) => statuses.add(s));
  if (params.some((p) => p.in === 'query')) statuses.add(400);
  if (params.some((p) => p.in === 'path')) statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}

function describeOperation(path: string, method: string, op: Json): void {
  const key = operationKey(method, path);
  const doc = OPERATIONS[key];
  const responses = op.responses as Record<string, Json>;
  const declared = Object.keys(responses)
    .map(Number)
    .filter((s) => s >= 400);
  for (const status of declared) delete responses[status];
  if (doc) {
    op.operationId = doc.operationId;
    for (const [status, response] of Object.entries(responses)) {
      if (status.startsWith('2')) response.description = doc.ok;
    }
  }
  for (const status of errorStatuses(op, declared, doc?.errors ?? [])) {
    const shared = ERROR_RESPONSES[status];
    if (shared) responses[status] = { $ref: `#/components/responses/${shared.name}` };
  }
  const examples = EXAMPLES[key];
  if (examples) {
    const body = (op.requestBody as { content?: Record<string, Json> } | undefined)?.content?.['application/json'];
    if (body && examples.request !== undefined) body.example = examples.request;
    const ok = Object.entries(responses).find(([status]) => status.startsWith('2'))?.[1] as { content?: Record<string, Json> } | undefined;
    const media = ok?.content?.['application/json'];
    if (media) media.example = examples.response;
  }
}

/** Every `$ref` to a component schema anywhere in `value`. */
function collectSchemaRefs(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) return value.forEach((v) => collectSchemaRefs(v, into));
  if (value === null || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) into.add(v.slice('#/components/schemas/'.length));
    else collectSchemaRefs(v, into);
  }
}

/** Drops component schemas nothing refers to (the registry yields an input and an output form of each). */
function pruneSchemas(doc: Json): void {
  const components = doc.components as { schemas?: Record<string, unknown> };
  const schemas = components.schemas ?? {};
  const used = new Set<string>();
  collectSchemaRefs({ ...doc, components: { ...components, schemas: {} } }, used);
  for (let grew = true; grew;) {
    const before = used.size;
    for (const name of [...used]) collectSchemaRefs(schemas[name], used);
    grew = used.size > before;
  }
  components.schemas = Object.fromEntries(
    Object.entries(schemas)
      .filter(([name]) => used.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
}

/** The finished /v1 document (pure: `doc` is the generated one and is not modified). */
export function finishManagementDocument(generated: Json): Json {
  const doc = structuredClone(generated);
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (op) describeOperation(path, method, op);
    }
  }
  const components = (doc.components ?? {}) as Json;
  components.responses = Object.fromEntries(
    Object.values(ERROR_RESPONSES).map(({ name, description, headers, examples }) => [
      name,
      { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } } },
    ]),
  );
  doc.components = components;
  doc.tags = TAGS;
  pruneSchemas(doc);
  return doc;
}
