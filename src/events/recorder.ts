import type { Kysely } from 'kysely';
import type { Clock } from '../kernel/clock.js';
import { newId } from '../kernel/ids.js';
import type { EventRecord, EventRepo } from '../storage/repos/events.js';
import type { Database } from '../storage/schema.js';
import type { Actor, EventType } from './catalogue.js';

/** Runs inside the event's transaction (e.g. the webhook outbox writing its deliveries). */
export type EventListener = (trx: Kysely<Database>, event: EventRecord) => Promise<void>;

export interface NewEvent {
  tenantId: string;
  type: EventType;
  organizationId: string | null;
  actor: Actor;
  data: Record<string, unknown>;
}

/**
 * Writes audit events in the same transaction as the change they describe, then lets
 * listeners add their rows (outbox) to that same transaction: the change, its event and its
 * deliveries commit together or not at all.
 */
export class EventRecorder {
  readonly #listeners: EventListener[] = [];

  constructor(
    private readonly repo: EventRepo,
    private readonly clock: Clock,
  ) {}

  onRecorded(listener: EventListener): void {
    this.#listeners.push(listener);
  }

  async record(trx: Kysely<Database>, e: NewEvent): Promise<EventRecord> {
    const now = this.clock.now();
    const event = await this.repo.append(trx, {
      id: newId('evt', now),
      tenantId: e.tenantId,
      type: e.type,
      organizationId: e.organizationId,
      actorType: e.actor.type,
      actorId: e.actor.id,
      data: e.data,
      createdAt: now,
    });
    for (const listener of this.#listeners) await listener(trx, event);
    return event;
  }
}

/** The public shape of an event (feed item and webhook envelope share its fields). */
export function eventView(e: EventRecord) {
  return {
    id: e.id,
    type: e.type,
    created: Math.floor(e.createdAt / 1000),
    organization_id: e.organizationId,
    actor: { type: e.actorType, id: e.actorId },
    data: e.data,
  };
}
