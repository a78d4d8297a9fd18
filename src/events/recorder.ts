import type { Clock } from '../kernel/clock.js';
import { newId } from '../kernel/ids.js';
import type { EventRecord, EventRepo } from '../storage/repos/events.js';
import type { Executor } from '../storage/db.js';
import type { Actor, EventType } from './catalogue.js';

/** An event about to be appended (its sequence number is assigned at commit time). */
export type PendingEvent = Omit<EventRecord, 'seq'>;

/** Runs inside the event's transaction (e.g. the webhook outbox writing its deliveries). */
export type EventListener = (trx: Executor, event: PendingEvent) => Promise<void>;

export interface NewEvent {
  tenantId: string;
  type: EventType;
  organizationId: string | null;
  actor: Actor;
  data: Record<string, unknown>;
}

/**
 * Writes audit events in the same transaction as the change they describe, and lets listeners
 * add their rows (the webhook outbox) to that same transaction: the change, its events and its
 * deliveries commit together or not at all.
 *
 * Appending an event takes the tenant's event lock (see EventRepo.append), held until commit.
 * So that a transaction holding it never waits for anything else (which could deadlock against
 * a transaction waiting for it), `transaction()` queues the events recorded inside it and
 * appends them all as its very last statements. Every event-writing transaction should run
 * through it.
 */
export class EventRecorder {
  readonly #listeners: EventListener[] = [];
  readonly #queues = new WeakMap<Executor, PendingEvent[]>();
  readonly #afterCommit = new WeakMap<Executor, Array<() => Promise<void>>>();

  constructor(
    private readonly repo: EventRepo,
    private readonly clock: Clock,
  ) {}

  onRecorded(listener: EventListener): void {
    this.#listeners.push(listener);
  }

  /** Runs `fn` in a transaction whose recorded events are appended just before commit. */
  async transaction<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
    const committed: Array<() => Promise<void>> = [];
    const result = await db.transaction().execute(async (trx) => {
      const queue: PendingEvent[] = [];
      this.#queues.set(trx, queue);
      this.#afterCommit.set(trx, committed);
      const out = await fn(trx);
      for (const event of queue) await this.repo.append(trx, event);
      return out;
    });
    for (const job of committed) await job();
    return result;
  }

  /**
   * Runs `job` once the transaction `trx` (opened by `transaction()`) has committed, and never if
   * it rolls back: work outside the database that must follow the change, such as revoking
   * tokens at an upstream provider. The job handles its own failures (the change stands).
   */
  afterCommit(trx: Executor, job: () => Promise<void>): void {
    const jobs = this.#afterCommit.get(trx);
    if (!jobs) throw new Error('afterCommit needs a transaction opened by EventRecorder.transaction');
    jobs.push(job);
  }

  async record(trx: Executor, e: NewEvent): Promise<PendingEvent> {
    const now = this.clock.now();
    const event: PendingEvent = {
      id: newId('evt', now),
      tenantId: e.tenantId,
      type: e.type,
      organizationId: e.organizationId,
      actorType: e.actor.type,
      actorId: e.actor.id,
      data: e.data,
      createdAt: now,
    };
    for (const listener of this.#listeners) await listener(trx, event);
    const queue = this.#queues.get(trx);
    if (queue) queue.push(event);
    else await this.repo.append(trx, event);
    return event;
  }
}

/** The public shape of an event (feed item and webhook envelope share its fields). */
export function eventView(e: PendingEvent) {
  return {
    id: e.id,
    type: e.type,
    created: Math.floor(e.createdAt / 1000),
    organization_id: e.organizationId,
    actor: { type: e.actorType, id: e.actorId },
    data: e.data,
  };
}
