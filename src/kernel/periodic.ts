/**
 * A job each instance runs on an interval: the timer is unref'd (it never keeps the process
 * alive), a tick never overlaps the previous one, and a failure is reported, not thrown. Jobs
 * must be safe to run on every instance at once (compare-and-set in the database).
 */
export class Periodic {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly job: () => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.tick(), this.intervalMs);
    this.#timer.unref();
  }

  /** Runs the job now (or joins the run in progress). */
  tick(): Promise<void> {
    this.#running ??= this.job()
      .then(() => undefined, this.onError)
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
