import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ManagementServices } from '../context.js';

/**
 * What the OpenAPI document says about a /v1 operation beyond its zod schemas, declared in the
 * route's `config.operation`: a stable operationId (the method name of generated clients, never
 * renamed), the description of its success response, and the error statuses that depend on the
 * operation's rules (409). The statuses every operation shares are added from the route itself
 * (openapi/document.ts): 401, 403 and 429 always; 400 with a body or query, 413 and 415 with a
 * body, 404 with a path parameter. Every /v1 route needs one (test/management/openapi.test.ts).
 */
export interface OperationDoc {
  operationId: string;
  /** The success response's description. */
  ok: string;
  /** Statuses beyond the shared ones (see above). */
  errors?: readonly number[];
}

/** The routes' registrar: Fastify with the zod type provider (bodies, params and queries typed from their schemas). */
export type ZodRoutes = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

/** What a feature's routes.ts declares: the tags it introduces and its routes, from the services they use. */
interface FeatureDeclaration {
  /** The OpenAPI tags it introduces; the first tags each of its routes whose schema names none. */
  tags?: readonly { name: string; description: string }[];
  routes(r: ZodRoutes, services: ManagementServices): void;
}

/**
 * One feature of the management API, declared once in its routes.ts and listed in features.ts:
 * /v1 (v1.ts), the console's API (which mounts the same routes) and the OpenAPI document
 * (openapi/operations.ts) loop over that list instead of naming each feature.
 */
export interface ManagementFeature {
  /** The OpenAPI tags this feature introduces (the document lists them in feature order). */
  tags: readonly { name: string; description: string }[];
  /** Its routes as a plugin, from the services they use. */
  plugin(services: ManagementServices): FastifyPluginAsync;
  /** Its operations, keyed by `METHOD /v1/path` with path parameters as in the document (`{orgId}`). */
  operations: Readonly<Record<string, OperationDoc>>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * The operations a feature's routes declare, read without a server: the routes are declared on a
 * recorder that keeps each one's `config.operation` and runs no handler (so no service is used).
 */
function declaredOperations(routes: FeatureDeclaration['routes']): Record<string, OperationDoc> {
  const found: Record<string, OperationDoc> = {};
  const recorder: Record<string, unknown> = {};
  for (const method of METHODS) {
    recorder[method] = (url: string, options: { config?: { operation?: OperationDoc } }) => {
      const doc = options.config?.operation;
      if (doc) found[`${method.toUpperCase()} /v1${url.replace(/:(\w+)/g, '{$1}')}`] = doc;
    };
  }
  routes(recorder as unknown as ZodRoutes, {} as ManagementServices);
  return found;
}

/** A feature from its declaration; its operations are read from its routes. */
export const defineFeature = ({ tags = [], routes }: FeatureDeclaration): ManagementFeature => ({
  tags,
  plugin: (services) => async (app) => {
    const tag = tags[0]?.name;
    if (tag !== undefined) {
      app.addHook('onRoute', (route) => {
        route.schema ??= {};
        route.schema.tags ??= [tag];
      });
    }
    routes(app.withTypeProvider<ZodTypeProvider>(), services);
  },
  operations: declaredOperations(routes),
});
