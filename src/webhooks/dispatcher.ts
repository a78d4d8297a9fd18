import { randomBytes } from 'node:crypto';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { newId } from '../kernel/ids.js';
import type { DeliveryRecord, WebhookDeliveryRepo } from '../storage/repos/webhook-deliveries.js';
import type { WebhookEndpointRepo } from '../storage/repos/webhook-endpoints.js';
import { attemptDelivery } from './deliver.js';
import { openEndpointSecret } from './endpoint-secret.js';
import type { RetrySchedule } from './schedule.js';
import type { EgressAgent } from '../egress/agent.js';
import { webhookHeaders } from './signer.js';

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

/** What became of one claimed delivery (reported to observers such as the metrics). */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'lease_lost' | 'handed_back';

export interface DispatcherOptions {
  deliveries: WebhookDeliveryRepo;
  endpoints: WebhookEndpointRepo;
  envelope: Envelope;
  agent: EgressAgent;
  clock: Clock;
  log: { warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
  /** When each attempt is due (webhooks/schedule.ts). */
  schedule: RetrySchedule;
  timeoutMs: number;
  intervalMs: number;
  /** Attempts in flight at once per endpoint on this instance (default 2). */
  perEndpoint?: number;
  /** Attempts in flight at once per organization on this instance (default 4). */
  perOrganization?: number;
  /**
   * The time due-ness and leases are judged by. Defaults to `clock`; the server passes the
   * database's clock on PostgreSQL so instances with skewed clocks agree on leases.
   */
  dueNow?: () => Promise<number>;
  /** Attempts in flight at once on this instance. */
  total?: number;
  /**
   * Runs the recording of an attempt in one transaction with what a final failure adds: the
   * composition root records the `webhook_delivery.failed` event there. Without it the result
   * is recorded alone.
   */
  atomically?: <T>(fn: (tx: FinishTx) => Promise<T>) => Promise<T>;
}

/** What the recording of an attempt may touch inside its transaction. */
export interface FinishTx {
  deliveries: WebhookDeliveryRepo;
  /** Records that `d` used up its attempts (only called when it did). */
  failed(d: DeliveryRecord, last: { attempts: number; statusCode: number | null; error: string | null }): Promise<void>;
}

/**
 * The delivery loop. Every `intervalMs`, and as soon as an attempt finishes, it claims due
 * deliveries (a lease in the database, so several instances share one backlog and a crashed
 * instance's claims come back when the lease runs out), sends each once, and records the result
 * and the next attempt time. Attempts are bounded per endpoint, so one slow endpoint never holds
 * up the others; a backlog drains as fast as its endpoint answers.
 */
export class Dispatcher {
  readonly #owner = `disp_${randomBytes(9).toString('base64url')}`;
  readonly #byEndpoint = new Map<string, number>();
  readonly #byOrganization = new Map<string, number>();
  readonly #running = new Set<Promise<void>>();
  /** Aborts the attempts in flight when a stop's grace period runs out. */
  readonly #handBack = new AbortController();
  readonly #observers: ((outcome: AttemptOutcome) => void)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  #ticking: Promise<void> | undefined;
  /** A pass is running now; `#again` asks for another as soon as it ends. */
  #inPass = false;
  #again = false;
  /** A pass is due at once (scheduled with no delay) and has not started: resolved when it starts. */
  #imminent: { started: Promise<void>; start: () => void } | undefined;

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    this.#started = true;
    this.#schedule(this.o.intervalMs);
  }

  /** Calls `fn` with the outcome of every claimed delivery this instance finishes. */
  observe(fn: (outcome: AttemptOutcome) => void): void {
    this.#observers.push(fn);
  }

  /**
   * Stops claiming and lets attempts in flight finish for up to `graceMs`; attempts still
   * running then are abandoned and their leases handed back (pending again, not counted as an
   * attempt), so another instance retries them at once instead of after the lease runs out.
   * A hard stop (SIGKILL) skips this: the leases then expire.
   */
  async stop(graceMs = Infinity): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#imminent?.start();
    this.#imminent = undefined;
    await this.#ticking;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      if (graceMs !== Infinity) timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.allSettled([...this.#running]), grace]);
    clearTimeout(timer);
    this.#handBack.abort();
    await Promise.allSettled([...this.#running]);
  }

  /** One pass: claim what is due and start it. Exposed for tests that drive the clock. */
  async tick(): Promise<number> {
    const perEndpoint = this.o.perEndpoint ?? 2;
    const perOrganization = this.o.perOrganization ?? 4;
    const free = (this.o.total ?? 32) - this.#running.size;
    if (free <= 0) return 0;
    const full = (m: Map<string, number>, cap: number) => [...m].filter(([, n]) => n >= cap).map(([id]) => id);
    const now = await this.#dueNow();
    const claimed = await this.o.deliveries.claim({
      owner: this.#owner,
      now,
      leaseMs: this.o.timeoutMs + 30_000,
      limit: free,
      perEndpoint,
      perOrganization,
      skipEndpoints: full(this.#byEndpoint, perEndpoint),
      skipOrganizations: full(this.#byOrganization, perOrganization),
    });
    let started = 0;
    for (const d of claimed) {
      if ((this.#byEndpoint.get(d.endpointId) ?? 0) >= perEndpoint || (this.#byOrganization.get(d.organizationId) ?? 0) >= perOrganization) {
        await this.o.deliveries.release(d.id, this.#owner, now);
        continue;
      }
      bump(this.#byEndpoint, d.endpointId, 1);
      bump(this.#byOrganization, d.organizationId, 1);
      const run = this.#attempt(d)
        .catch((err) => this.o.log.error({ err, delivery: d.id }, 'webhook attempt failed to record'))
        .finally(() => {
          bump(this.#byEndpoint, d.endpointId, -1);
          bump(this.#byOrganization, d.organizationId, -1);
          this.#running.delete(run);
          // A slot is free: claim what is due now rather than at the next interval, so an
          // endpoint's backlog drains at the pace it answers, not `perEndpoint` per interval.
          this.#soon();
        });
      this.#running.add(run);
      started++;
    }
    return started;
  }

  /**
   * Resolves when the dispatcher is quiet (for tests): every attempt started so far recorded, and
   * no pass running or about to run. A finished attempt starts a pass at once (`#soon`), which
   * may claim what a test's own `tick()` then finds taken, so both are waited for.
   */
  async idle(): Promise<void> {
    for (;;) {
      if (this.#running.size) await Promise.allSettled([...this.#running]);
      else if (this.#inPass) await this.#ticking;
      else if (this.#imminent) await this.#imminent.started;
      else return;
    }
  }

  /** The next pass in `delayMs` (one timer at a time; never while a pass runs). */
  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#imminent?.start();
    this.#imminent = undefined;
    if (delayMs === 0) {
      let start = () => {};
      const started = new Promise<void>((resolve) => (start = resolve));
      this.#imminent = { started, start };
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#imminent?.start();
      this.#imminent = undefined;
      this.#inPass = true;
      this.#ticking = this.tick()
        .then(() => undefined)
        .catch((err) => this.o.log.warn({ err }, 'webhook dispatcher pass failed'))
        .finally(() => {
          this.#inPass = false;
          const again = this.#again;
          this.#again = false;
          this.#schedule(again ? 0 : this.o.intervalMs);
        });
    }, delayMs);
    this.#timer.unref();
  }

  /** Another pass as soon as possible (after the one running, if any). */
  #soon(): void {
    if (!this.#started || this.#stopped) return;
    if (this.#inPass) this.#again = true;
    else this.#schedule(0);
  }

  #dueNow(): Promise<number> {
    return this.o.dueNow ? this.o.dueNow() : Promise.resolve(this.o.clock.now());
  }

  async #attempt(d: DeliveryRecord): Promise<void> {
    const endpoint = await this.o.endpoints.findById(d.endpointId);
    if (!endpoint) return; // deleted meanwhile: its deliveries went with it
    const startedAt = this.o.clock.now();
    let secret: string;
    try {
      secret = openEndpointSecret(this.o.envelope, endpoint);
    } catch (err) {
      // Counted as a failed attempt, so the delivery cannot stay claimed forever.
      this.o.log.error({ err, endpoint: endpoint.id }, 'webhook secret cannot be decrypted');
      await this.#record(d, startedAt, { ok: false, error: 'internal: signing secret unavailable', durationMs: 0 });
      return;
    }
    const result = await attemptDelivery({
      url: endpoint.url,
      body: d.body,
      headers: webhookHeaders({
        deliveryId: d.id,
        eventType: d.eventType,
        secret,
        body: d.body,
        nowSeconds: Math.floor(startedAt / 1000),
      }),
      timeoutMs: this.o.timeoutMs,
      agent: this.o.agent,
      clock: this.o.clock,
      signal: this.#handBack.signal,
    });
    if (result.abandoned) {
      await this.o.deliveries.release(d.id, this.#owner, await this.#dueNow());
      this.#report('handed_back');
      return;
    }
    await this.#record(d, startedAt, result);
  }

  #report(outcome: AttemptOutcome): void {
    for (const fn of this.#observers) fn(outcome);
  }

  async #record(d: DeliveryRecord, startedAt: number, result: { ok: boolean; status?: number; error?: string; durationMs: number }): Promise<void> {
    const attempt = d.attempts + 1;
    const now = await this.#dueNow();
    const last = attempt >= d.attemptLimit;
    const statusCode = result.status ?? null;
    const error = result.ok ? null : (result.error ?? 'failed');
    const failed = !result.ok && last;
    const atomically = this.o.atomically ?? ((fn) => fn({ deliveries: this.o.deliveries, failed: async () => undefined }));
    const recorded = await atomically(async (tx) => {
      const moved = await tx.deliveries.complete(
        d,
        this.#owner,
        { id: newId('wha', startedAt), deliveryId: d.id, attempt, startedAt, durationMs: result.durationMs, statusCode, error },
        {
          status: result.ok ? 'delivered' : last ? 'failed' : 'pending',
          nextAttemptAt: result.ok || last ? d.nextAttemptAt : now + this.o.schedule.delayAfterMs(attempt),
          statusCode,
          error,
        },
        now,
      );
      if (moved && failed) await tx.failed(d, { attempts: attempt, statusCode, error });
      return moved;
    });
    if (!recorded) this.o.log.warn({ delivery: d.id }, 'webhook lease lost before the attempt was recorded');
    else if (failed) {
      // Identifiers and the last outcome only: never the body, the URL or the secret.
      this.o.log.warn(
        {
          endpoint_id: d.endpointId,
          event_id: d.eventId,
          delivery_id: d.id,
          event_type: d.eventType,
          attempts: attempt,
          last_status: statusCode,
          last_error: error,
        },
        'webhook delivery failed: attempts exhausted',
      );
    }
    this.#report(!recorded ? 'lease_lost' : result.ok ? 'delivered' : last ? 'failed' : 'retry');
  }
}
