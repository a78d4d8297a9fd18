import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isEventType } from '../../events/catalogue.js';
import { eventView } from '../../events/recorder.js';
import { tenantOf } from '../../http/tenant.js';
import { errors } from '../../kernel/errors.js';
import type { EventRepo } from '../../storage/repos/events.js';
import { errorResponse, idOf } from '../common.js';
import { principalOf } from '../v1.js';

const eventSchema = z.object({
  id: z.string(),
  type: z.string(),
  created: z.number().int(),
  organization_id: z.string().nullable(),
  actor: z.object({ type: z.string(), id: z.string().nullable() }),
  data: z.record(z.string(), z.unknown()),
});

const query = z.strictObject({
  after: idOf('evt').optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  types: z
    .string()
    .max(2000)
    .transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean))
    .refine((ts) => ts.every(isEventType), 'unknown event type')
    .optional(),
  organization_id: idOf('org').optional(),
});

/**
 * GET /v1/events: the audit trail as a cursor feed, oldest first. `next_cursor` is the id to pass
 * as `after` next time (the last event returned, or the given cursor when nothing is new), so a
 * poller never misses or repeats an event.
 */
export const eventRoutes =
  (repo: EventRepo): FastifyPluginAsync =>
  async (app) => {
    app.withTypeProvider<ZodTypeProvider>().get('/events', {
      config: { permission: 'events:read', access: 'any' },
      schema: {
        tags: ['events'],
        summary: 'Read the audit trail (cursor feed)',
        querystring: query,
        response: { 200: z.object({ data: z.array(eventSchema), next_cursor: z.string().nullable(), has_more: z.boolean() }), 400: errorResponse },
      },
      handler: async (request) => {
        const tenantId = tenantOf(request).id;
        const principal = principalOf(request);
        const q = request.query;
        if (principal.organizationId !== null && q.organization_id !== undefined && q.organization_id !== principal.organizationId) {
          throw errors.forbidden('this API key is bound to another organization');
        }
        let afterSeq = 0;
        if (q.after !== undefined) {
          const seq = await repo.findSeq(tenantId, q.after, principal.organizationId ?? undefined);
          if (seq === undefined) throw errors.invalidRequest('after: unknown event id');
          afterSeq = seq;
        }
        const rows = await repo.list({
          tenantId,
          afterSeq,
          limit: q.limit + 1,
          types: q.types,
          organizationId: principal.organizationId ?? q.organization_id,
        });
        const data = rows.slice(0, q.limit);
        return {
          data: data.map(eventView),
          next_cursor: data[data.length - 1]?.id ?? q.after ?? null,
          has_more: rows.length > q.limit,
        };
      },
    });
  };
