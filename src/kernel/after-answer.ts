/**
 * Writes that must not delay an answer (a password reset's or a passwordless sign-in's token and
 * email, written only for an address that has an account): each starts on the next turn of the
 * event loop, after the answer that caused it has been written, so an existing account's answer
 * takes no longer than an unknown address's. `idle()` waits for them (shutdown, tests).
 */
export class AfterAnswer {
  readonly #pending = new Set<Promise<void>>();

  constructor(
    private readonly done: () => void,
    private readonly onError?: (err: unknown) => void,
  ) {}

  run(work: () => Promise<unknown>): void {
    const run: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .then(() => this.done())
      .catch((err: unknown) => this.onError?.(err))
      .finally(() => this.#pending.delete(run));
    this.#pending.add(run);
  }

  async idle(): Promise<void> {
    while (this.#pending.size) await Promise.allSettled([...this.#pending]);
  }
}
