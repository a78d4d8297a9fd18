import { randomBytes } from 'node:crypto';
import type { Clock } from '../kernel/clock.js';
import type { Envelope } from '../kernel/crypto/envelope.js';
import { newId } from '../kernel/ids.js';
import type { DeliveryRecord, WebhookDeliveryRepo } from '../storage/repos/webhook-deliveries.js';
import type { WebhookEndpointRepo } from '../storage/repos/webhook-endpoints.js';
import { attemptDelivery } from './deliver.js';
import type { EgressAgent } from './egress-agent.js';
import { webhookHeaders } from './signer.js';

export const webhookSecretContext = (tenantId: string, endpointId: string) => `webhook_secret:${tenantId}:${endpointId}`;

export interface DispatcherOptions {
  deliveries: WebhookDeliveryRepo;
  endpoints: WebhookEndpointRepo;
  envelope: Envelope;
  agent: EgressAgent;
  clock: Clock;
  log: { warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
  /** Seconds before each attempt; schedule[0] is the first attempt (0). */
  schedule: readonly number[];
  timeoutMs: number;
  intervalMs: number;
  /** Attempts in flight at once per endpoint on this instance. */
  perEndpoint?: number;
  /** Attempts in flight at once on this instance. */
  total?: number;
}

/**
 * The delivery loop. Every `intervalMs` it claims due deliveries (a lease in the database, so
 * several instances share one backlog and a crashed instance's claims come back when the lease
 * runs out), sends each once, and records the result and the next attempt time. Attempts are
 * bounded per endpoint, so one slow endpoint never holds up the others.
 */
export class Dispatcher {
  readonly #owner = `disp_${randomBytes(9).toString('base64url')}`;
  readonly #inFlight = new Map<string, number>();
  readonly #running = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #ticking: Promise<void> | undefined;

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    this.#schedule();
  }

  /** Stops claiming; waits for attempts in flight (their leases cover a hard stop). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#ticking;
    await Promise.allSettled([...this.#running]);
  }

  /** One pass: claim what is due and start it. Exposed for tests that drive the clock. */
  async tick(): Promise<number> {
    const perEndpoint = this.o.perEndpoint ?? 2;
    const total = this.o.total ?? 32;
    const free = total - this.#running.size;
    if (free <= 0) return 0;
    const busy = [...this.#inFlight].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
    const now = this.o.clock.now();
    const claimed = await this.o.deliveries.claim(this.#owner, now, this.o.timeoutMs + 30_000, free, busy);
    let started = 0;
    for (const d of claimed) {
      const n = this.#inFlight.get(d.endpointId) ?? 0;
      if (n >= perEndpoint) {
        await this.o.deliveries.release(d.id, this.#owner, now);
        continue;
      }
      this.#inFlight.set(d.endpointId, n + 1);
      const run = this.#attempt(d)
        .catch((err) => this.o.log.error({ err, delivery: d.id }, 'webhook attempt failed to record'))
        .finally(() => {
          const left = (this.#inFlight.get(d.endpointId) ?? 1) - 1;
          if (left > 0) this.#inFlight.set(d.endpointId, left);
          else this.#inFlight.delete(d.endpointId);
          this.#running.delete(run);
        });
      this.#running.add(run);
      started++;
    }
    return started;
  }

  /** Resolves when every attempt started so far has been recorded (for tests). */
  async idle(): Promise<void> {
    while (this.#running.size) await Promise.allSettled([...this.#running]);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#ticking = this.tick()
        .then(() => undefined)
        .catch((err) => this.o.log.warn({ err }, 'webhook dispatcher pass failed'))
        .finally(() => this.#schedule());
    }, this.o.intervalMs);
    this.#timer.unref();
  }

  async #attempt(d: DeliveryRecord): Promise<void> {
    const endpoint = await this.o.endpoints.findById(d.endpointId);
    if (!endpoint) return; // deleted meanwhile: its deliveries went with it
    const secret = this.o.envelope.decrypt(endpoint.secretEnc, webhookSecretContext(endpoint.tenantId, endpoint.id));
    const startedAt = this.o.clock.now();
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
    });
    const attempt = d.attempts + 1;
    const now = this.o.clock.now();
    const last = attempt >= d.attemptLimit;
    const delay = this.o.schedule[attempt] ?? 0;
    const recorded = await this.o.deliveries.complete(
      d,
      this.#owner,
      {
        id: newId('wha', now),
        deliveryId: d.id,
        attempt,
        startedAt,
        durationMs: result.durationMs,
        statusCode: result.status ?? null,
        error: result.ok ? null : (result.error ?? 'failed'),
      },
      {
        status: result.ok ? 'delivered' : last ? 'failed' : 'pending',
        nextAttemptAt: result.ok || last ? d.nextAttemptAt : now + delay * 1000,
        statusCode: result.status ?? null,
        error: result.ok ? null : (result.error ?? 'failed'),
      },
      now,
    );
    if (!recorded) this.o.log.warn({ delivery: d.id }, 'webhook lease lost before the attempt was recorded');
  }
}
