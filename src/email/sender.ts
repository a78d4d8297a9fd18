/**
 * The email sending loop, the webhook dispatcher's shape (src/webhooks/dispatcher.ts) for mail:
 * every `intervalMs` (and as soon as something is enqueued on this instance) it claims due
 * outbox rows with a lease in the database, so several instances share one backlog and a crashed
 * instance's claims come back when the lease runs out; it sends each once and records the result
 * with its `email.sent` / `email.failed` event in one transaction. A message claimed again after a
 * crash is sent with the same Message-ID, so a receiver that deduplicates on it sees it once.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../kernel/clock.js';
import type { EmailOutboxRepo, EmailRecord, EmailStatus } from '../storage/repos/email.js';
import type { MailTransport, OutgoingEmail, SendResult } from './transport.js';

export interface FinishEmailTx {
  outbox: EmailOutboxRepo;
  /** Records `email.sent` or `email.failed` for `e` (only called when the row moved). */
  event(e: EmailRecord, outcome: 'sent' | 'failed', detail: { attempts: number; error: string | null; transport: string }): Promise<void>;
}

export interface EmailSenderOptions {
  outbox: EmailOutboxRepo;
  transport: MailTransport;
  clock: Clock;
  log: { warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
  /** Seconds before each attempt (KEYHALL_EMAIL_RETRY_SCHEDULE); its length is the attempt limit. */
  schedule: readonly number[];
  intervalMs: number;
  /** Messages in flight at once on this instance. */
  concurrency?: number;
  atomically: <T>(fn: (tx: FinishEmailTx) => Promise<T>) => Promise<T>;
}

export class EmailSender {
  readonly #owner = `mail_${randomBytes(9).toString('base64url')}`;
  readonly #running = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #stopped = false;
  #pass: Promise<number> | undefined;

  constructor(private readonly o: EmailSenderOptions) {}

  get attemptLimit(): number {
    return this.o.schedule.length;
  }

  get transport(): string {
    return this.o.transport.name;
  }

  start(): void {
    this.#started = true;
    this.#schedule(this.o.intervalMs);
  }

  /** Something was enqueued here: look now rather than at the next interval. */
  poke(): void {
    if (this.#started && !this.#stopped) this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#pass;
    await Promise.allSettled([...this.#running]);
    this.o.transport.close();
  }

  /** One pass: claims what is due and sends it; resolves when those sends are recorded. Exposed for tests that drive the clock. */
  tick(): Promise<number> {
    const run = (this.#pass ?? Promise.resolve(0)).catch(() => 0).then(() => this.#claimAndSend());
    this.#pass = run;
    return run;
  }

  /** Resolves when nothing claimed on this instance is still being sent. */
  async idle(): Promise<void> {
    await this.#pass?.catch(() => 0);
    while (this.#running.size) await Promise.allSettled([...this.#running]);
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.tick()
        .catch((err) => this.o.log.warn({ err }, 'email sender pass failed'))
        .finally(() => this.#schedule(this.o.intervalMs));
    }, delayMs);
    this.#timer.unref();
  }

  async #claimAndSend(): Promise<number> {
    const free = (this.o.concurrency ?? 4) - this.#running.size;
    if (free <= 0) return 0;
    const now = this.o.clock.now();
    const claimed = await this.o.outbox.claim({ owner: this.#owner, now, leaseMs: 120_000, limit: free });
    const runs = claimed.map((e) => {
      const run = this.#send(e)
        .catch((err) => this.o.log.error({ err, email_id: e.id }, 'email attempt failed to record'))
        .finally(() => this.#running.delete(run));
      this.#running.add(run);
      return run;
    });
    await Promise.all(runs);
    return claimed.length;
  }

  async #send(e: EmailRecord): Promise<void> {
    let result: SendResult;
    if (e.message === null) result = { kind: 'refused', error: 'internal: message missing' };
    else {
      const m = JSON.parse(e.message) as OutgoingEmail;
      result = await this.o.transport.send(m, { tenantId: e.tenantId, outboxId: e.id, template: e.template });
    }
    const attempts = e.attempts + 1;
    const now = this.o.clock.now();
    const last = attempts >= e.attemptLimit;
    const status: EmailStatus = result.kind === 'sent' ? 'sent' : result.kind === 'refused' || last ? 'failed' : 'pending';
    const error = result.kind === 'sent' ? null : result.error;
    const delay = (this.o.schedule[attempts] ?? this.o.schedule[this.o.schedule.length - 1] ?? 60) * 1000;
    const transport = this.o.transport.name;
    const moved = await this.o.atomically(async (tx) => {
      const ok = await tx.outbox.finish(
        e.id,
        this.#owner,
        { status, nextAttemptAt: status === 'pending' ? now + delay : e.nextAttemptAt, error, transport },
        now,
      );
      if (ok && status !== 'pending') await tx.event(e, status, { attempts, error, transport });
      return ok;
    });
    if (!moved) this.o.log.warn({ email_id: e.id }, 'email lease lost before the attempt was recorded');
    // Identifiers and the outcome only: never the recipient's message, its body or its link.
    else if (status === 'failed') this.o.log.warn({ email_id: e.id, template: e.template, attempts, last_error: error }, 'email failed');
  }
}
