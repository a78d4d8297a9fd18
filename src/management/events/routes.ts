import { z } from 'zod';
import { ACTOR_TYPES, type ActorType, isEventType } from '../../events/catalogue.js';
import { tenantOf } from '../../http/tenant.js';
import { errors } from '../../kernel/errors.js';
import { errorResponse, idOf, limitParam } from '../common.js';
import { defineFeature } from '../feature.js';
import { principalOf } from '../principal.js';

const eventSchema = z
  .object({
    id: z.string(),
    type: z.string(),
    created: z.number().int(),
    organization_id: z.string().nullable(),
    actor: z.object({ type: z.string(), id: z.string().nullable() }),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });

const query = z.strictObject({
  after: idOf('evt').optional(),
  limit: limitParam,
  types: z
    .string()
    .max(2000)
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .refine((ts) => ts.every(isEventType), 'names an unknown event type')
    .optional(),
  organization_id: idOf('org').optional(),
  actor_type: z.enum(ACTOR_TYPES).describe('Only events of this kind of actor').optional(),
  actor_id: z
    .string()
    .min(1)
    .max(2048)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .describe('Needs actor_type; a user, API key or SCIM actor is an id of that kind (user_…, key_…, dir_…)')
    .optional(),
  order: z.enum(['asc', 'desc']).default('asc').describe('asc: oldest first (the default); desc: newest first, `after` continues back in time'),
});

/** The id prefix of the actor types whose ids are Keyhall ids; OAuth clients and `system` may name other things (a client_id URL). */
const ACTOR_ID_PREFIX: Partial<Record<ActorType, string>> = { user: 'user', api_key: 'key', scim: 'dir' };

/** actor_id only goes with actor_type, and must look like an id of that type. */
function checkActorFilter(actorType: ActorType | undefined, actorId: string | undefined): void {
  if (actorId === undefined) return;
  if (actorType === undefined) throw errors.invalidRequest('actor_id: needs actor_type');
  const prefix = ACTOR_ID_PREFIX[actorType];
  if (prefix !== undefined && !idOf(prefix).safeParse(actorId).success)
    throw errors.invalidRequest(`actor_id: must be an id starting with ${prefix}_ for actor_type ${actorType}`);
}

/**
 * GET /v1/events: the audit trail as a cursor feed, oldest first (or newest first with
 * `order=desc`). `next_cursor` is the id to pass as `after` next time (the last event returned,
 * or the given cursor when nothing is new), so a poller never misses or repeats an event; in
 * `desc` order the same cursor walks back in time.
 */
export const eventsFeature = defineFeature({
  tags: [{ name: 'events', description: 'The audit trail as a cursor feed' }],
  routes: (r, { events: feed }) => {
    r.get('/events', {
      config: {
        permission: 'events:read',
        access: 'any',
        operation: {
          operationId: 'listEvents',
          ok: 'Events after the cursor, oldest first (newest first with `order=desc`); pass `next_cursor` as `after` next time',
        },
      },
      schema: {
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
        checkActorFilter(q.actor_type, q.actor_id);
        return feed.page(tenantId, {
          after: q.after,
          limit: q.limit,
          types: q.types,
          organizationId: q.organization_id,
          visibleTo: principal.organizationId ?? undefined,
          actorType: q.actor_type,
          actorId: q.actor_id,
          order: q.order,
        });
      },
    });
  },
});
