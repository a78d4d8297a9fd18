import type { FastifyInstance } from 'fastify';
import type { Config } from './config/index.js';
import { type Context, type ContextOptions, createContext } from './context.js';
import { buildApp } from './http/app.js';
import { listenWhileBooting } from './http/booting.js';
import { type MetricsListener, startMetricsListener } from './http/metrics.js';
import { Metrics } from './metrics/metrics.js';
import { databaseNow } from './storage/db.js';
import { repos } from './storage/repos/index.js';
import type { CreatedTenant } from './tenants/service.js';
import { TenantInputError } from './kernel/tenancy.js';
import type { Dispatcher } from './webhooks/dispatcher.js';
import { Periodic } from './kernel/periodic.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: Context;
  port: number;
  /** The webhook delivery loop of this instance. */
  dispatcher: Dispatcher;
  /** The periodic sweep that records `credential.offer.expired` for offers nobody redeemed. */
  offerExpiry: Periodic;
  /** This instance's metrics (undefined when metrics are off). */
  metrics?: Metrics;
  /** The port of the separate metrics listener (KEYHALL_METRICS_PORT). */
  metricsPort?: number;
  /** Set when this start created the first tenant (newcomer path). */
  bootstrapped?: CreatedTenant;
  /**
   * Marks the instance not ready, stops accepting, lets in-flight requests and webhook attempts
   * finish (up to the shutdown timeout; attempts still running then hand their leases back),
   * closes the database.
   */
  close(): Promise<void>;
}

/** config → database → app → listen. Used by `keyhall serve` and by the tests. */
export async function startServer(config: Config, opts: ContextOptions = {}): Promise<RunningServer> {
  // The port is held (and /readyz answers 503) while the database is opened and migrated.
  const boot = await listenWhileBooting(config.host, config.port);
  let ctx: Context;
  try {
    ctx = await createContext(config, opts);
  } catch (err) {
    await boot.close();
    throw err;
  }
  let draining = false;
  const metrics = metricsOf(ctx);
  let app: FastifyInstance;
  let bootstrapped: CreatedTenant | undefined;
  try {
    // The first tenant exists before the app takes the port: /readyz answers 200 only then. Its
    // host names the port the boot listener holds (the real one when 0 was asked for).
    bootstrapped = await bootstrap(ctx, config, boot.port);
    app = await buildApp(ctx, { metrics, draining: () => draining });
    await app.ready();
    await boot.close();
    await app.listen({ port: boot.port, host: config.host });
  } catch (err) {
    await boot.close();
    await ctx.close();
    throw err;
  }
  let metricsListener: MetricsListener | undefined;
  if (metrics && config.metricsPort !== undefined) {
    try {
      metricsListener = await startMetricsListener(metrics, config.metricsHost, config.metricsPort);
    } catch (err) {
      await app.close();
      await ctx.close();
      throw err;
    }
  }
  const port = boot.port;
  const dispatcher = ctx.dispatcher;
  if (metrics) dispatcher.observe((outcome) => metrics.delivery(outcome));
  dispatcher.start();
  ctx.logoutDispatcher.start();
  ctx.emailSender.start();
  const offerExpiry = new Periodic(
    config.credentialOfferSweepSeconds * 1000,
    () => ctx.credentials.expireDue(),
    (err) => app.log.warn({ err }, 'credential offer expiry sweep failed'),
  );
  offerExpiry.start();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          app.log.warn('shutdown timeout: closing remaining connections');
          app.server.closeAllConnections();
          resolve();
        }, config.shutdownTimeoutMs);
      });
      // Webhook attempts get the same grace; those still running then hand their leases back
      // before the database closes.
      await Promise.all([
        Promise.race([app.close(), timeout]),
        dispatcher.stop(config.shutdownTimeoutMs),
        ctx.logoutDispatcher.stop(),
        Promise.all([ctx.email.idle(), ctx.emailSignin.idle()]).then(() => ctx.emailSender.stop()),
        offerExpiry.stop(),
      ]);
      clearTimeout(timer);
      await metricsListener?.close();
      await ctx.close();
    })();
    return closing;
  };
  return { app, ctx, port, dispatcher, offerExpiry, metrics, metricsPort: metricsListener?.port, bootstrapped, close };
}

/** On an empty database, the first tenant, for `localhost:<port>` (the newcomer path). */
async function bootstrap(ctx: Context, config: Config, port: number): Promise<CreatedTenant | undefined> {
  if (!config.bootstrap || (await ctx.tenants.count()) > 0) return undefined;
  try {
    return await ctx.tenants.create({ host: `localhost:${port}` });
  } catch (err) {
    // Another instance bootstrapped the same host first.
    if (!(err instanceof TenantInputError)) throw err;
    return undefined;
  }
}

/** The metrics of this instance, when a metrics port or token is configured. */
function metricsOf(ctx: Context): Metrics | undefined {
  const { config, db } = ctx;
  if (config.metricsPort === undefined && !config.metricsToken) return undefined;
  return new Metrics({
    tenantLabel: config.metricsTenantLabel,
    sources: {
      backlog: async () => {
        const now = await databaseNow(db);
        const b = await repos(db.kysely, db.dialect).webhookDeliveries.backlog(now);
        return { size: b.size, oldestDueAgeSeconds: b.oldestDueAt === null ? 0 : Math.max(0, now - b.oldestDueAt) / 1000 };
      },
      pool: () => db.poolStats(),
    },
  });
}
