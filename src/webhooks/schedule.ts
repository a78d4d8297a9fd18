/**
 * The webhook retry schedule (KEYHALL_WEBHOOK_RETRY_SCHEDULE): seconds to wait before each
 * attempt, the first being 0. Its length is the attempt limit every new delivery is given; the
 * outbox and the dispatcher both read it from here.
 */
export class RetrySchedule {
  readonly delays: readonly number[];

  constructor(delaysSeconds: readonly number[]) {
    if (delaysSeconds.length === 0) throw new Error('a retry schedule needs at least one attempt');
    this.delays = Object.freeze([...delaysSeconds]);
  }

  /** How many attempts a delivery gets. */
  get attemptLimit(): number {
    return this.delays.length;
  }

  /** Milliseconds to wait after attempt number `attempt` (1-based) fails; the last delay repeats. */
  delayAfterMs(attempt: number): number {
    return (this.delays[attempt] ?? this.delays[this.delays.length - 1]!) * 1000;
  }
}

/**
 * The state every outbox delivery row starts in (webhooks, the webhook ping, back-channel
 * logout): pending, due now, never attempted, with `attemptLimit` attempts and no lease.
 */
export function pendingDelivery(now: number, attemptLimit: number) {
  return {
    status: 'pending' as const,
    attempts: 0,
    attemptLimit,
    nextAttemptAt: now,
    leaseOwner: null,
    leaseUntil: null,
    lastStatusCode: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
  };
}
