/** /Users and /Groups: HTTP binding of ScimUsers and ScimGroups. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { baseUrlOf, connectionOf, send } from '../http/scim.js';
import { scimErrors } from './errors.js';
import { GROUP_SORT_KEYS, type ScimGroups } from './groups.js';
import { parseListParams } from './list.js';
import { parseAttributeList, project } from './projection.js';
import { etagOf, GROUP_SCHEMA, groupToScim, LIST_SCHEMA, USER_SCHEMA, userToScim } from './resources.js';
import { USER_SORT_KEYS, type ScimUsers } from './users.js';

export interface ScimResourceServices {
  users: ScimUsers;
  groups: ScimGroups;
}

type IdRequest = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, unknown> }>;

const USER_ID = /^dsu_[0-9a-z]{26}$/;
const GROUP_ID = /^dsg_[0-9a-z]{26}$/;

function idOf(request: IdRequest, shape: RegExp, kind: string): string {
  const { id } = request.params;
  if (!shape.test(id)) throw scimErrors.notFound(`${kind} ${id} not found`);
  return id;
}

const ifMatch = (request: FastifyRequest) => {
  const h = request.headers['if-match'];
  return Array.isArray(h) ? h.join(',') : h;
};

function single(request: IdRequest, resource: Record<string, unknown>, core: string) {
  const q = request.query;
  const attrs = parseAttributeList(typeof q.attributes === 'string' ? q.attributes : undefined);
  const excluded = parseAttributeList(typeof q.excludedAttributes === 'string' ? q.excludedAttributes : undefined);
  return project(resource, core, attrs, excluded);
}

const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

/** A POST …/.search body (RFC 7644 §3.4.3) as the equivalent query parameters. */
function searchQuery(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw scimErrors.invalidSyntax('the body must be a SearchRequest');
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.schemas) || b.schemas.length !== 1 || b.schemas[0] !== SEARCH_SCHEMA)
    throw scimErrors.invalidSyntax(`schemas must be ["${SEARCH_SCHEMA}"]`);
  const text = (v: unknown, name: string) => {
    if (v === undefined) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isInteger(v)) return String(v);
    throw scimErrors.invalidValue(`${name} has the wrong type`);
  };
  const list = (v: unknown, name: string) => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw scimErrors.invalidValue(`${name} must be an array of strings`);
    return v.join(',');
  };
  return {
    filter: text(b.filter, 'filter'),
    startIndex: text(b.startIndex, 'startIndex'),
    count: text(b.count, 'count'),
    sortBy: text(b.sortBy, 'sortBy'),
    sortOrder: text(b.sortOrder, 'sortOrder'),
    attributes: list(b.attributes, 'attributes'),
    excludedAttributes: list(b.excludedAttributes, 'excludedAttributes'),
  };
}

/** If-None-Match naming the current version: 304 without a body. */
function notModified(request: FastifyRequest, version: number): boolean {
  const h = request.headers['if-none-match'];
  const tags = (Array.isArray(h) ? h.join(',') : (h ?? '')).split(',').map((t) => t.trim().replace(/^W\//, ''));
  return tags.includes('*') || tags.includes(etagOf(version).slice(2));
}

/** Whether a projection will show `name` (so its rows are worth loading). */
const wants = (name: string, attrs?: string[], excluded?: string[]) =>
  attrs?.length ? attrs.some((a) => a.toLowerCase().split('.')[0] === name) : !excluded?.some((a) => a.toLowerCase() === name);

export async function resourceRoutes(app: FastifyInstance, opts: ScimResourceServices): Promise<void> {
  const { users, groups } = opts;

  const listUsers = async (request: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>) => {
    const p = parseListParams(query, USER_SCHEMA, USER_SORT_KEYS);
    const { total, rows } = await users.list(connectionOf(request), p);
    const base = baseUrlOf(request);
    const Resources = rows.map((u) => project(userToScim(u, base), USER_SCHEMA, p.attributes, p.excludedAttributes));
    return send(reply, 200, { schemas: [LIST_SCHEMA], totalResults: total, startIndex: p.startIndex, itemsPerPage: rows.length, Resources });
  };
  app.get('/Users', async (request, reply) => listUsers(request, reply, request.query as Record<string, unknown>));
  app.post('/Users/.search', async (request, reply) => listUsers(request, reply, searchQuery(request.body)));
  app.post('/Users', async (request, reply) => {
    const u = await users.create(connectionOf(request), request.body);
    reply.header('location', `${baseUrlOf(request)}/Users/${u.id}`);
    return send(reply, 201, userToScim(u, baseUrlOf(request), []), u.version);
  });
  app.get('/Users/:id', async (request: IdRequest, reply) => {
    const u = await users.get(connectionOf(request), idOf(request, USER_ID, 'User'));
    if (notModified(request, u.version)) return reply.code(304).header('etag', etagOf(u.version)).send();
    return send(reply, 200, single(request, userToScim(u, baseUrlOf(request), await users.groupsOf(u)), USER_SCHEMA), u.version);
  });
  app.put('/Users/:id', async (request: IdRequest, reply) => {
    const u = await users.replace(connectionOf(request), idOf(request, USER_ID, 'User'), request.body, ifMatch(request));
    return send(reply, 200, userToScim(u, baseUrlOf(request), await users.groupsOf(u)), u.version);
  });
  app.patch('/Users/:id', async (request: IdRequest, reply) => {
    const u = await users.patch(connectionOf(request), idOf(request, USER_ID, 'User'), request.body, ifMatch(request));
    return send(reply, 200, userToScim(u, baseUrlOf(request), await users.groupsOf(u)), u.version);
  });
  app.delete('/Users/:id', async (request: IdRequest, reply) => {
    await users.delete(connectionOf(request), idOf(request, USER_ID, 'User'), ifMatch(request));
    return reply.code(204).send();
  });

  const listGroups = async (request: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>) => {
    const p = parseListParams(query, GROUP_SCHEMA, GROUP_SORT_KEYS);
    const { total, rows } = await groups.list(connectionOf(request), p);
    const base = baseUrlOf(request);
    const withMembers = wants('members', p.attributes, p.excludedAttributes);
    const members = withMembers ? await groups.membersOfGroups(rows) : new Map();
    const excluded = withMembers ? p.excludedAttributes : [...(p.excludedAttributes ?? []), 'members'];
    const Resources = rows.map((g) => project(groupToScim(g, base, members.get(g.id) ?? []), GROUP_SCHEMA, p.attributes, excluded));
    return send(reply, 200, { schemas: [LIST_SCHEMA], totalResults: total, startIndex: p.startIndex, itemsPerPage: rows.length, Resources });
  };
  app.get('/Groups', async (request, reply) => listGroups(request, reply, request.query as Record<string, unknown>));
  app.post('/Groups/.search', async (request, reply) => listGroups(request, reply, searchQuery(request.body)));
  app.post('/Groups', async (request, reply) => {
    const g = await groups.create(connectionOf(request), request.body);
    reply.header('location', `${baseUrlOf(request)}/Groups/${g.id}`);
    return send(reply, 201, groupToScim(g, baseUrlOf(request), await groups.members(g)), g.version);
  });
  app.get('/Groups/:id', async (request: IdRequest, reply) => {
    const g = await groups.get(connectionOf(request), idOf(request, GROUP_ID, 'Group'));
    if (notModified(request, g.version)) return reply.code(304).header('etag', etagOf(g.version)).send();
    return send(reply, 200, single(request, groupToScim(g, baseUrlOf(request), await groups.members(g)), GROUP_SCHEMA), g.version);
  });
  app.put('/Groups/:id', async (request: IdRequest, reply) => {
    const g = await groups.replace(connectionOf(request), idOf(request, GROUP_ID, 'Group'), request.body, ifMatch(request));
    return send(reply, 200, groupToScim(g, baseUrlOf(request), await groups.members(g)), g.version);
  });
  app.patch('/Groups/:id', async (request: IdRequest, reply) => {
    const g = await groups.patch(connectionOf(request), idOf(request, GROUP_ID, 'Group'), request.body, ifMatch(request));
    return send(reply, 200, groupToScim(g, baseUrlOf(request), await groups.members(g)), g.version);
  });
  app.delete('/Groups/:id', async (request: IdRequest, reply) => {
    await groups.delete(connectionOf(request), idOf(request, GROUP_ID, 'Group'), ifMatch(request));
    return reply.code(204).send();
  });
}
