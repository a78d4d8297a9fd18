/**
 * The request and reply of a SCIM exchange, shared by the SCIM plugin (src/scim/routes.ts) and
 * its /Users and /Groups routes (src/scim/resource-routes.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SCIM_CONTENT_TYPE, scimErrors } from '../scim/errors.js';
import type { ScimConnection } from '../scim/provisioning.js';
import { etagOf } from '../scim/resources.js';
import { tenantOf } from './tenant.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The directory connection whose token authorized this SCIM request. */
    scimConnection: ScimConnection | null;
  }
}

export function send(reply: FastifyReply, status: number, body: unknown, version?: number): FastifyReply {
  if (version !== undefined) reply.header('etag', etagOf(version));
  return reply.code(status).header('content-type', SCIM_CONTENT_TYPE).send(JSON.stringify(body));
}

export function connectionOf(request: FastifyRequest): ScimConnection {
  if (!request.scimConnection) throw scimErrors.unauthorized('a SCIM token is required');
  return request.scimConnection;
}

export const baseUrlOf = (request: FastifyRequest) => `${tenantOf(request).issuer.replace(/\/$/, '')}/scim/v2`;
