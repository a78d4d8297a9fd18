import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, iso, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';
import { endpointView } from './service.js';

const endpointSchema = z
  .object({
    endpoint_id: z.string(),
    organization_id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Webhook' });
const deliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.string(),
    attempts: z.array(
      z.object({ attempt: z.number(), at: z.string(), duration_ms: z.number(), status_code: z.number().nullable(), error: z.string().nullable() }),
    ),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

const orgParams = z.strictObject({ orgId: idOf('org') });
const endpointParams = z.strictObject({ orgId: idOf('org'), webhookId: idOf('we') });
const deliveryParams = endpointParams.extend({ deliveryId: idOf('whd') });
const endpointList = listing('webhooks');
const deliveryList = listing('webhook_deliveries');

export const webhooksFeature = defineFeature({
  tags: [{ name: 'webhooks', description: 'Webhook endpoints and their delivery log' }],
  routes: (r, { webhooks: service }) => {
    r.post('/organizations/:orgId/webhooks', {
      config: {
        permission: 'webhooks:write',
        access: 'organization',
        operation: { operationId: 'createWebhook', ok: 'The endpoint registered; `secret` appears only in this response' },
      },
      schema: {
        summary: 'Register a webhook endpoint (the signing secret is shown only here)',
        params: orgParams,
        body: z.strictObject({ url: z.string().max(2048), events: z.array(z.string().max(64)).min(1).max(64).optional() }),
        response: { 201: endpointSchema.extend({ secret: z.string() }), 400: errorResponse, 404: errorResponse },
      },
      handler: async (request, reply) => {
        const { endpoint, secret } = await service.create(tenantOf(request).id, actorOf(request), request.params.orgId, request.body);
        return reply.code(201).send({ ...endpointView(endpoint), secret });
      },
    });

    r.get('/organizations/:orgId/webhooks', {
      config: { permission: 'webhooks:read', access: 'organization', operation: { operationId: 'listWebhooks', ok: "The organization's webhook endpoints" } },
      schema: {
        summary: 'List webhook endpoints (never their secrets)',
        params: orgParams,
        querystring: endpointList.query,
        response: { 200: pageResponse(endpointSchema) },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const p = endpointList.page(await service.list(tenantOf(request).id, request.params.orgId, after, limit + 1), limit, (e) => e.id);
        return { ...p, data: p.data.map(endpointView) };
      },
    });

    r.get('/organizations/:orgId/webhooks/:webhookId', {
      config: { permission: 'webhooks:read', access: 'organization', operation: { operationId: 'getWebhook', ok: 'The webhook endpoint' } },
      schema: { summary: 'Get a webhook endpoint', params: endpointParams, response: { 200: endpointSchema, 404: errorResponse } },
      handler: async (request) => endpointView(await service.get(tenantOf(request).id, request.params.orgId, request.params.webhookId)),
    });

    r.patch('/organizations/:orgId/webhooks/:webhookId', {
      config: {
        permission: 'webhooks:write',
        access: 'organization',
        operation: { operationId: 'updateWebhook', ok: 'The endpoint as updated (the URL is checked against the egress policy again)' },
      },
      schema: {
        summary: "Change an endpoint's url (checked against the egress policy) or event types; {} changes nothing",
        params: endpointParams,
        body: z.strictObject({ url: z.string().max(2048).optional(), events: z.array(z.string().max(64)).min(1).max(64).optional() }),
        response: { 200: endpointSchema, 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => {
        const p = request.params;
        return endpointView(await service.update(tenantOf(request).id, actorOf(request), p.orgId, p.webhookId, request.body));
      },
    });

    r.post('/organizations/:orgId/webhooks/:webhookId/ping', {
      config: {
        permission: 'webhooks:write',
        access: 'organization',
        operation: { operationId: 'pingWebhook', ok: 'A signed `ping` event is queued for this endpoint only' },
      },
      schema: {
        summary: 'Queue a signed `ping` event to this endpoint only (shown in its delivery log)',
        params: endpointParams,
        response: { 202: z.object({ delivery_id: z.string(), event_id: z.string(), status: z.string() }), 404: errorResponse },
      },
      handler: async (request, reply) => {
        const d = await service.ping(tenantOf(request).id, request.params.orgId, request.params.webhookId);
        return reply.code(202).send({ delivery_id: d.id, event_id: d.eventId, status: d.status });
      },
    });

    r.delete('/organizations/:orgId/webhooks/:webhookId', {
      config: {
        permission: 'webhooks:write',
        access: 'organization',
        operation: { operationId: 'deleteWebhook', ok: 'Removed; its pending deliveries are dropped' },
      },
      schema: {
        summary: 'Remove a webhook endpoint (its pending deliveries are dropped)',
        params: endpointParams,
        response: { 204: z.undefined(), 404: errorResponse },
      },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.orgId, request.params.webhookId);
        return reply.code(204).send();
      },
    });

    r.get('/organizations/:orgId/webhooks/:webhookId/deliveries', {
      config: {
        permission: 'webhooks:read',
        access: 'organization',
        operation: { operationId: 'listWebhookDeliveries', ok: 'A page of deliveries, each with its attempts' },
      },
      schema: {
        summary: "An endpoint's delivery log, with every attempt",
        params: endpointParams,
        querystring: deliveryList.query.extend({ status: z.enum(['pending', 'delivering', 'delivered', 'failed']).optional() }),
        response: { 200: pageResponse(deliverySchema), 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after, status } = request.query;
        const rows = await service.deliveries(tenantOf(request).id, request.params.orgId, request.params.webhookId, { status, after, limit: limit + 1 });
        const p = deliveryList.page(rows, limit, (x) => x.delivery.id);
        return {
          ...p,
          data: p.data.map(({ delivery: d, attempts }) => ({
            id: d.id,
            event_id: d.eventId,
            event_type: d.eventType,
            status: d.status,
            attempts: attempts.map((a) => ({ attempt: a.attempt, at: iso(a.startedAt), duration_ms: a.durationMs, status_code: a.statusCode, error: a.error })),
            next_attempt_at: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
            created_at: iso(d.createdAt),
          })),
        };
      },
    });

    r.post('/organizations/:orgId/webhooks/:webhookId/deliveries/:deliveryId/retry', {
      config: {
        permission: 'webhooks:write',
        access: 'organization',
        operation: { operationId: 'retryWebhookDelivery', ok: 'The delivery is queued again', errors: [409] },
      },
      schema: {
        summary: 'Retry or resend a delivery now (same webhook-id and body); one being attempted right now is 409',
        params: deliveryParams,
        response: { 202: z.object({ id: z.string(), status: z.string() }), 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        const p = request.params;
        const d = await service.retry(tenantOf(request).id, p.orgId, p.webhookId, p.deliveryId);
        return reply.code(202).send({ id: d.id, status: d.status });
      },
    });
  },
});
