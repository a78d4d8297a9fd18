import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The Prometheus metrics of one instance (docs/metrics.md). Framework-free: the HTTP binding
 * (http/metrics.ts) feeds request outcomes in, the dispatcher reports delivery outcomes, and
 * the gauges read the database and the pool when scraped. Labels are only fixed vocabularies
 * (route family, status class, grant type, outcome) and, behind a setting, tenant ids: never a
 * path, a host, a client id or anything a caller sent.
 */

/** Webhook delivery outcomes as the dispatcher reports them. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'lease_lost' | 'handed_back';

/** Login outcomes of the hosted login form. */
export type LoginOutcome = 'succeeded' | 'invalid' | 'limited' | 'rejected';

export interface MetricsSources {
  /** The undelivered webhook backlog, read at scrape time. */
  backlog(): Promise<{ size: number; oldestDueAgeSeconds: number }>;
  /** Database pool occupancy (PostgreSQL); undefined on SQLite. */
  pool(): { max: number; total: number; idle: number; waiting: number } | undefined;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** Latency buckets in seconds: sub-millisecond cache hits up to slow argon2 logins. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Records one finished request of a route family: status code and duration in seconds. */
export type RequestRecorder = (statusCode: number, seconds: number, tenantId: string | null) => void;

export class Metrics {
  readonly registry = new Registry();
  readonly #tenantLabel: boolean;
  readonly #requests: Counter<string>;
  readonly #duration: Histogram<string>;
  readonly #tokens: Counter<string>;
  readonly #logins: Counter<string>;
  readonly #deliveries: Counter<string>;

  constructor(opts: { tenantLabel: boolean; sources: MetricsSources }) {
    this.#tenantLabel = opts.tenantLabel;
    const t = opts.tenantLabel ? ['tenant'] : [];
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'keyhall_http_requests_total',
      help: 'HTTP requests answered, by route family and status class',
      labelNames: ['family', 'status_class', ...t],
      registers,
    });
    this.#duration = new Histogram({
      name: 'keyhall_http_request_duration_seconds',
      help: 'Time from request received to response sent, by route family and status class',
      labelNames: ['family', 'status_class', ...t],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#tokens = new Counter({
      name: 'keyhall_tokens_issued_total',
      help: 'Successful /token responses, by grant type',
      labelNames: ['grant_type', ...t],
      registers,
    });
    this.#logins = new Counter({
      name: 'keyhall_logins_total',
      help: 'Hosted login form submissions, by outcome',
      labelNames: ['outcome', ...t],
      registers,
    });
    this.#deliveries = new Counter({
      name: 'keyhall_webhook_deliveries_total',
      help: 'Webhook delivery attempts finished by this instance, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    const { sources } = opts;
    // Both backlog gauges share one query per scrape. A database error keeps the last values
    // (the scrape still answers; keyhall_db_pool_* and /readyz tell the story).
    let reading: Promise<{ size: number; oldestDueAgeSeconds: number } | undefined> | undefined;
    const backlog = () =>
      (reading ??= sources
        .backlog()
        .catch(() => undefined)
        .finally(() => {
          reading = undefined;
        }));
    new Gauge({
      name: 'keyhall_webhook_backlog',
      help: 'Webhook deliveries not yet delivered or given up (all instances)',
      registers,
      async collect() {
        const b = await backlog();
        if (b) this.set(b.size);
      },
    });
    new Gauge({
      name: 'keyhall_webhook_oldest_due_age_seconds',
      help: 'How long the longest-waiting due webhook delivery has been due (0: none due)',
      registers,
      async collect() {
        const b = await backlog();
        if (b) this.set(b.oldestDueAgeSeconds);
      },
    });
    if (sources.pool()) {
      // PostgreSQL only: SQLite has one connection and no pool.
      const pool = (read: (p: NonNullable<ReturnType<MetricsSources['pool']>>) => number) =>
        function (this: Gauge) {
          const p = sources.pool();
          if (p) this.set(read(p));
        };
      new Gauge({ name: 'keyhall_db_pool_max', help: 'Database pool size limit', registers, collect: pool((p) => p.max) });
      new Gauge({ name: 'keyhall_db_pool_connections', help: 'Database connections open', registers, collect: pool((p) => p.total) });
      new Gauge({ name: 'keyhall_db_pool_idle', help: 'Database connections open and idle', registers, collect: pool((p) => p.idle) });
      new Gauge({ name: 'keyhall_db_pool_waiting', help: 'Queries waiting for a database connection', registers, collect: pool((p) => p.waiting) });
    }
    // Process (CPU, memory, file descriptors) and Node.js (event-loop lag, heap, GC) metrics.
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * The recorder for one route family. Without tenant labels its label children are resolved
   * once per status class, so recording a request is two increments and no allocation.
   */
  requestRecorder(family: string): RequestRecorder {
    if (this.#tenantLabel) {
      return (status, seconds, tenantId) => {
        const labels = { family, status_class: statusClass(status), tenant: tenantId ?? '' };
        this.#requests.inc(labels);
        this.#duration.observe(labels, seconds);
      };
    }
    const children = STATUS_CLASSES.map((c) => ({ count: this.#requests.labels(family, c), duration: this.#duration.labels(family, c) }));
    return (status, seconds) => {
      const child = children[Math.min(4, Math.max(0, Math.floor(status / 100) - 1))]!;
      child.count.inc();
      child.duration.observe(seconds);
    };
  }

  tokenIssued(grantType: string, tenantId: string | null): void {
    this.#tokens.inc(this.#tenantLabel ? { grant_type: grantType, tenant: tenantId ?? '' } : { grant_type: grantType });
  }

  login(outcome: LoginOutcome, tenantId: string | null): void {
    this.#logins.inc(this.#tenantLabel ? { outcome, tenant: tenantId ?? '' } : { outcome });
  }

  delivery(outcome: DeliveryOutcome): void {
    this.#deliveries.inc({ outcome });
  }

  /** The exposition: Prometheus text format and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

function statusClass(status: number): string {
  return STATUS_CLASSES[Math.min(4, Math.max(0, Math.floor(status / 100) - 1))]!;
}
