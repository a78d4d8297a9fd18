/**
 * Back-channel logout, the sending side: every `intervalMs` it claims due deliveries of the
 * outbox (a lease in the database, so instances share the work and a crashed instance's claims
 * come back when the lease runs out), signs a fresh Logout Token for each, POSTs it as the
 * `logout_token` form field through the egress agent, and records the outcome and the next
 * attempt time (KEYHALL_LOGOUT_RETRY_SCHEDULE). The token and the URL are never logged.
 */
import { randomBytes } from 'node:crypto';
import type { EgressAgent } from '../egress/agent.js';
import type { Clock } from '../kernel/clock.js';
import { KEYHALL_VERSION } from '../kernel/version.js';
import type { SigninClientSettings } from '../oauth/authorize/types.js';
import { signLogoutToken } from '../oauth/logout/token.js';
import type { KeySource } from '../oauth/tokens/access-token.js';
import type { LogoutDeliveryRecord, LogoutDeliveryRepo } from '../storage/repos/logout-deliveries.js';
import { attemptDelivery, type DeliveryResult } from '../webhooks/deliver.js';
import type { RetrySchedule } from '../webhooks/schedule.js';

export const LOGOUT_USER_AGENT = `Keyhall-Logout/${KEYHALL_VERSION}`;

/** Delivered and failed rows are kept this long (for operators), then swept every SWEEP_EVERY passes. */
const KEEP_FINISHED_MS = 7 * 24 * 3600_000;
const SWEEP_EVERY = 100;

export interface LogoutDispatcherOptions {
  deliveries: LogoutDeliveryRepo;
  /** The tenant's issuer now (undefined: the tenant is gone). */
  issuerOf: (tenantId: string) => Promise<string | undefined>;
  clientSettings: (tenantId: string, clientId: string) => Promise<SigninClientSettings>;
  keys: KeySource;
  agent: EgressAgent;
  clock: Clock;
  schedule: RetrySchedule;
  timeoutMs: number;
  intervalMs: number;
  log: { warn: (obj: object, msg: string) => void };
  /** The time due-ness and leases are judged by (the database's clock on PostgreSQL); default `clock`. */
  dueNow?: () => Promise<number>;
  /** Deliveries claimed per pass (default 16). */
  batch?: number;
}

export class LogoutDispatcher {
  readonly #owner = `lgo_${randomBytes(9).toString('base64url')}`;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #pass: Promise<number> | undefined;
  #passes = 0;

  constructor(private readonly o: LogoutDispatcherOptions) {}

  start(): void {
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#pass?.catch(() => undefined);
  }

  /**
   * One pass: claims what is due and sends it, resolving with how many were attempted once
   * every attempt is recorded. Passes never overlap on one instance (tests drive it with an
   * injected clock).
   */
  async tick(): Promise<number> {
    while (this.#pass) await this.#pass.catch(() => undefined);
    const pass = this.#run();
    this.#pass = pass;
    try {
      return await pass;
    } finally {
      this.#pass = undefined;
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.tick()
        .catch((err: unknown) => this.o.log.warn({ err }, 'logout dispatcher pass failed'))
        .finally(() => this.#schedule());
    }, this.o.intervalMs);
    this.#timer.unref();
  }

  #now(): Promise<number> {
    return this.o.dueNow ? this.o.dueNow() : Promise.resolve(this.o.clock.now());
  }

  async #run(): Promise<number> {
    const now = await this.#now();
    if (++this.#passes % SWEEP_EVERY === 0) await this.o.deliveries.sweep(now - KEEP_FINISHED_MS);
    const claimed = await this.o.deliveries.claim({ owner: this.#owner, now, leaseMs: this.o.timeoutMs + 30_000, limit: this.o.batch ?? 16 });
    await Promise.all(claimed.map((d) => this.#attempt(d)));
    return claimed.length;
  }

  async #attempt(d: LogoutDeliveryRecord): Promise<void> {
    const issuer = await this.o.issuerOf(d.tenantId);
    if (issuer === undefined) return; // the tenant went, and its deliveries with it
    let result: DeliveryResult;
    try {
      const settings = await this.o.clientSettings(d.tenantId, d.clientId);
      const { token } = await signLogoutToken(
        { issuer, tenantId: d.tenantId, clientId: d.clientId, sub: d.userId, sid: d.sessionId, alg: settings.idTokenAlg },
        { keys: this.o.keys, now: this.o.clock.now() },
      );
      result = await attemptDelivery({
        url: d.uri,
        body: new URLSearchParams({ logout_token: token }).toString(),
        headers: {},
        contentType: 'application/x-www-form-urlencoded',
        userAgent: LOGOUT_USER_AGENT,
        timeoutMs: this.o.timeoutMs,
        agent: this.o.agent,
        clock: this.o.clock,
        maxResponseBytes: 0,
      });
    } catch (err) {
      // A signing failure counts as an attempt, so the row cannot stay claimed forever.
      this.o.log.warn({ err, delivery_id: d.id }, 'logout token could not be signed');
      result = { ok: false, error: 'internal: signing failed', durationMs: 0 };
    }
    const attempt = d.attempts + 1;
    const last = attempt >= d.attemptLimit;
    const now = await this.#now();
    const recorded = await this.o.deliveries.complete(
      d,
      this.#owner,
      {
        status: result.ok ? 'delivered' : last ? 'failed' : 'pending',
        nextAttemptAt: result.ok || last ? d.nextAttemptAt : now + this.o.schedule.delayAfterMs(attempt),
        statusCode: result.status ?? null,
        error: result.ok ? null : (result.error ?? 'failed'),
      },
      now,
    );
    if (recorded && !result.ok && last) {
      // Identifiers and the last outcome only: never the token or the URL.
      this.o.log.warn(
        { delivery_id: d.id, client_id: d.clientId, session_id: d.sessionId, attempts: attempt, last_status: result.status ?? null, last_error: result.error },
        'back-channel logout failed: attempts exhausted',
      );
    }
  }
}
