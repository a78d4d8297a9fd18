import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isEventType } from '../../events/catalogue.js';
import { tenantOf } from '../../http/tenant.js';
import { errors } from '../../kernel/errors.js';
import type { EventFeedService } from './service.js';
import { errorResponse, idOf, limitParam } from '../common.js';
import { principalOf } from '../v1.js';

const eventSchema = z.object({
  id: z.string(),
  type: z.string(),
  created: z.number().int(),
  organization_id: z.string().nullable(),
  actor: z.object({ type: z.string(), id: z.string().nullable() }),
  data: z.record(z.string(), z.unknown()),
}).meta({ id: 'Event' });

const query = z.strictObject({
  after: idOf('evt').optional(),
  limit: limitParam,
  types: z
    .string()
    .max(2000)
    .transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean))
    .refine((ts) => ts.every(isEventType), 'names an unknown event type')
    .optional(),
  organization_id: idOf('org').optional(),
});

/**
 * GET /v1/events: the audit trail as a cursor feed, oldest first. `next_cursor` is the id to pass
 * as `after` next time (the last event returned, or the given cursor when nothing is new), so a
 * poller never misses or repeats an event.
 */
export const eventRoutes =
  (feed: EventFeedService): FastifyPluginAsync =>
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
        return feed.page(tenantId, {
          after: q.after,
          limit: q.limit,
          types: q.types,
          organizationId: q.organization_id,
          visibleTo: principal.organizationId ?? undefined,
        });
      },
    });
  };
