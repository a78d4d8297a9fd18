/**
 * The SCIM 2.0 server under /scim/v2 (a Fastify plugin kept outside /v1): only a directory
 * connection's bearer token authorizes it, every answer is application/scim+json, and every
 * failure is a SCIM error.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { inspectInput, MAX_INPUT_DEPTH } from '../kernel/input.js';
import { jsonBodyProblem, readJsonBody } from '../http/json-body.js';
import { baseUrlOf, send } from '../http/scim.js';
import { tenantOf } from '../http/tenant.js';
import { isAppError } from '../kernel/errors.js';
import type { ScimAuth } from './auth.js';
import { ScimError, scimErrors } from './errors.js';
import { resourceRoutes, type ScimResourceServices } from './resource-routes.js';
import { resourceType, resourceTypeList, schema, schemaList, serviceProviderConfig } from './discovery.js';

/**
 * Text no database stores faithfully (NUL, unpaired surrogates) or absurd nesting, found by
 * `inspectInput` in a body or query parameter: a SCIM 400 rather than the generic one of the
 * request-wide check (or a database error, for text that escapes produce later).
 */
function unstorable(finding: NonNullable<ReturnType<typeof inspectInput>>, text: (detail: string) => ScimError): ScimError {
  if (finding.kind === 'depth') return scimErrors.invalidSyntax(`${finding.path}: nested more than ${MAX_INPUT_DEPTH} levels deep`);
  return text(`${finding.path}: contains a NUL character or an unpaired surrogate`);
}

function toScimError(err: unknown, request: FastifyRequest): ScimError {
  if (err instanceof ScimError) return err;
  if (isAppError(err)) return new ScimError(err.status, undefined, err.description ?? err.code, err.headers);
  const e = err as { code?: string; statusCode?: number };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.statusCode === 413) return scimErrors.tooLarge('the request body is too large');
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || e.statusCode === 415) return scimErrors.unsupportedMediaType('send application/scim+json');
  if (err instanceof SyntaxError || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return scimErrors.invalidSyntax('the body is not valid JSON');
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return scimErrors.invalidSyntax('malformed request');
  request.log.error({ err }, 'unhandled SCIM error');
  return scimErrors.server();
}

/**
 * Renders any failure as a SCIM error: the plugin's error handler, and the server's handler of
 * failures found before routing (an over-long path segment, bad percent-encoding) under /scim/v2.
 */
export function renderScimError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const e = toScimError(err, request);
  for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
  return send(reply.header('cache-control', 'no-store'), e.status, e.toBody());
}

/** A path as an error's detail shows it: over-long ones are cut, not echoed whole. */
const shown = (path: string) => (path.length > 100 ? `${path.slice(0, 100)}…` : path);

export interface ScimServices extends ScimResourceServices {
  auth: ScimAuth;
}

export async function scimRoutes(app: FastifyInstance, opts: { scim: ScimServices; bodyLimit: number }): Promise<void> {
  const { scim, bodyLimit } = opts;

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/scim+json', 'application/json'], { parseAs: 'buffer', bodyLimit }, (_req, body, done) => {
    const result = readJsonBody(body as Buffer);
    if (!result.ok) {
      done(scimErrors.invalidSyntax(jsonBodyProblem(result)), undefined);
      return;
    }
    const finding = inspectInput(result.value);
    if (finding) done(unstorable(finding, scimErrors.invalidValue), undefined);
    else done(null, result.value);
  });
  app.setErrorHandler(renderScimError);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = app.allowedMethods(path);
    if (allow.length === 0) return send(reply, 404, scimErrors.notFound(`no SCIM endpoint ${request.method} ${shown(path)}`).toBody());
    return send(
      reply.header('allow', allow.join(', ')),
      405,
      scimErrors.methodNotAllowed(`${request.method} is not allowed on ${shown(path)}; it accepts ${allow.join(', ')}`).toBody(),
    );
  });

  app.decorateRequest('scimConnection', null);
  app.addHook('onRequest', async (request) => {
    const conn = await scim.auth.authenticate(tenantOf(request).id, request.headers.authorization);
    request.scimConnection = { id: conn.id, tenantId: conn.tenantId, organizationId: conn.organizationId, groupRoles: conn.groupRoles };
    // Query parameters: the same check as for bodies, as SCIM errors (a filter's is invalidFilter).
    for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
      const finding = inspectInput(value);
      if (finding) throw unstorable({ ...finding, path: name }, name === 'filter' ? scimErrors.invalidFilter : scimErrors.invalidValue);
    }
  });

  app.get('/ServiceProviderConfig', async (request, reply) => send(reply, 200, serviceProviderConfig(baseUrlOf(request), bodyLimit)));
  app.get('/ResourceTypes', async (request, reply) => send(reply, 200, resourceTypeList(baseUrlOf(request))));
  app.get<{ Params: { id: string } }>('/ResourceTypes/:id', async (request, reply) => send(reply, 200, resourceType(baseUrlOf(request), request.params.id)));
  app.get('/Schemas', async (request, reply) => send(reply, 200, schemaList(baseUrlOf(request))));
  app.get<{ Params: { id: string } }>('/Schemas/:id', async (request, reply) => send(reply, 200, schema(baseUrlOf(request), request.params.id)));
  app.post('/Bulk', async () => {
    throw scimErrors.notImplemented('Bulk operations are not supported (ServiceProviderConfig bulk.supported is false)');
  });

  await app.register(resourceRoutes, { users: scim.users, groups: scim.groups });
}
