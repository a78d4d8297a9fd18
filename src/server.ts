import type { FastifyInstance } from 'fastify';
import type { Config } from './config/index.js';
import { type Context, type ContextOptions, createContext } from './context.js';
import { buildApp } from './http/app.js';
import type { CreatedTenant } from './tenants/service.js';
import { TenantInputError } from './kernel/tenancy.js';
import type { Dispatcher } from './webhooks/dispatcher.js';

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

/** config → database → app → listen. Used by `keyhall serve` and by the tests. */
export async function startServer(config: Config, opts: ContextOptions = {}): Promise<RunningServer> {
  const ctx = await createContext(config, opts);
  let app: FastifyInstance;
  try {
    app = await buildApp(ctx, { logStream: opts.logStream });
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

  const dispatcher = ctx.dispatcher;
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
