import type { FastifyInstance } from 'fastify';
import type { Config } from './config/index.js';
import { type Context, type ContextOptions, createContext } from './context.js';
import { buildApp } from './http/app.js';
import type { CreatedTenant } from './tenants/service.js';
import { monotonicClock } from './kernel/clock.js';
import { TenantInputError } from './kernel/tenancy.js';
import { databaseNow } from './storage/db.js';
import { WebhookDeliveryRepo } from './storage/repos/webhook-deliveries.js';
import { WebhookEndpointRepo } from './storage/repos/webhook-endpoints.js';
import { Dispatcher } from './webhooks/dispatcher.js';

export interface RunningServer {
  app: FastifyInstance;
  ctx: Context;
  port: number;
  /** The webhook delivery loop of this instance. */
  dispatcher: Dispatcher;
  /** Set when this start created the first tenant (newcomer path). */
  bootstrapped?: CreatedTenant;
  /** Stops accepting, lets in-flight requests finish (up to the timeout), closes the database. */
  close(): Promise<void>;
}

function dueClock(ctx: Context): () => Promise<number> {
  if (ctx.db.dialect === 'postgres') return () => databaseNow(ctx.db);
  const clock = monotonicClock();
  return async () => clock.now();
}

/** config → database → app → listen. Used by `keyhall serve` and by the tests. */
export async function startServer(config: Config, opts: ContextOptions = {}): Promise<RunningServer> {
  const ctx = await createContext(config, opts);
  let app: FastifyInstance;
  try {
    app = await buildApp(ctx);
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await ctx.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  let bootstrapped: CreatedTenant | undefined;
  if (config.bootstrap && (await ctx.tenants.count()) === 0) {
    try {
      bootstrapped = await ctx.tenants.create({ host: `localhost:${port}` });
    } catch (err) {
      // Another instance bootstrapped the same host first.
      if (!(err instanceof TenantInputError)) throw err;
    }
  }

  const dispatcher = new Dispatcher({
    deliveries: new WebhookDeliveryRepo(ctx.db.kysely, ctx.db.dialect),
    endpoints: new WebhookEndpointRepo(ctx.db.kysely),
    envelope: ctx.envelope,
    agent: ctx.egress.agent,
    clock: ctx.clock,
    log: app.log,
    schedule: config.webhookRetrySchedule,
    timeoutMs: config.webhookTimeoutMs,
    intervalMs: config.dispatchIntervalMs,
    // With the real clock, judge due-ness and leases by one clock all instances share (the
    // database's on PostgreSQL; a step-proof monotonic clock for the single SQLite instance).
    dueNow: opts.clock ? undefined : dueClock(ctx),
  });
  dispatcher.start();

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          app.log.warn('shutdown timeout: closing remaining connections');
          app.server.closeAllConnections();
          resolve();
        }, config.shutdownTimeoutMs);
      });
      await Promise.race([Promise.all([app.close(), dispatcher.stop()]), timeout]);
      clearTimeout(timer);
      await ctx.close();
    })();
    return closing;
  };
  return { app, ctx, port, dispatcher, bootstrapped, close };
}
