import type { EventType } from '../events/catalogue.js';
import { EVENT_TYPES } from '../events/catalogue.js';
import type { EventListener } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import { newId } from '../kernel/ids.js';
import type { Dialect } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import { pendingDelivery, type RetrySchedule } from './schedule.js';

/** True when an endpoint subscribed to `events` receives `type` (["*"] means every webhook type). */
export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes('*') || events.includes(type);
}

/**
 * The outbox: inside the transaction that records an event, write one delivery row per
 * subscribed endpoint of the event's organization. The envelope is serialised once here, so every
 * attempt sends the same bytes.
 */
export function webhookOutbox(clock: Clock, dialect: Dialect, schedule: RetrySchedule): EventListener {
  return async (trx, event) => {
    if (!event.organizationId || !EVENT_TYPES[event.type as EventType]?.webhook) return;
    const { webhookEndpoints, webhookDeliveries } = repos(trx, dialect);
    const endpoints = (await webhookEndpoints.listByOrganization(event.tenantId, event.organizationId, dialect)).filter((e) =>
      subscribes(e.events, event.type),
    );
    if (endpoints.length === 0) return;
    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      created: Math.floor(event.createdAt / 1000),
      organization_id: event.organizationId,
      data: event.data,
    });
    const now = clock.now();
    for (const endpoint of endpoints) {
      await webhookDeliveries.insert({
        id: newId('whd', now),
        tenantId: event.tenantId,
        organizationId: event.organizationId,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        body,
        ...pendingDelivery(now, schedule.attemptLimit),
      });
    }
  };
}
