/**
 * The console's built screens (console/, built by `npm run build` into dist/console-assets) served
 * under /console with a strict CSP: scripts and styles only from this origin (no inline script),
 * never framed. Hashed assets are cached for good; the page itself never.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { SigninService } from '../../screens/service.js';
import { sessionToken } from '../screens/session-cookie.js';
import { tenantOf } from '../tenant.js';
import { consoleCookieOk, setConsoleCookie } from './console-cookie.js';

/** Where the build puts the console (the repository's or package's dist/console-assets). */
export const CONSOLE_DIST = path.resolve(import.meta.dirname, '../../../dist/console-assets');

/** Logos in the branding preview may come from any https origin. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};
/** A hashed asset name: no directories, no dot segments. */
const ASSET_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.[a-z0-9]+$/;

function secure(reply: FastifyReply): FastifyReply {
  return reply.header('content-security-policy', CONSOLE_CSP).header('x-frame-options', 'DENY').header('referrer-policy', 'same-origin');
}

export interface ConsoleAssetOptions {
  /** Where the built console is (default: CONSOLE_DIST). */
  dir?: string;
  /** The hosted sessions, to mint the console cookie for a signed-in browser. */
  signin: Pick<SigninService, 'current' | 'settings'>;
}

export async function consoleAssetRoutes(app: FastifyInstance, opts: ConsoleAssetOptions): Promise<void> {
  const dir = opts.dir ?? CONSOLE_DIST;
  let index: Buffer | undefined;
  /**
   * A page load by a signed-in browser (a top-level navigation: after /login, a link or a
   * reload) gets the console cookie of its session when it lacks it (console-cookie.ts). The
   * load itself changes nothing; the cookie then goes only with requests this site starts.
   */
  const mint = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = sessionToken(request);
    if (!token || consoleCookieOk(request, token)) return;
    if (await opts.signin.current(tenantOf(request).id, token)) setConsoleCookie(request, reply, token, opts.signin.settings.sessionMaxSeconds);
  };
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    await mint(request, reply);
    index ??= existsSync(path.join(dir, 'index.html')) ? readFileSync(path.join(dir, 'index.html')) : undefined;
    if (!index) throw errors.unavailable('the console is not built: run `npm run build` (npm start does it)');
    return secure(reply).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(index);
  };

  app.get('/console', async (_request, reply) => reply.redirect('/console/', 308));
  app.get('/console/assets/:name', async (request, reply) => {
    const { name } = request.params as { name: string };
    const type = TYPES[path.extname(name)];
    const file = path.join(dir, 'assets', name);
    if (!ASSET_NAME.test(name) || !type || !existsSync(file)) throw errors.notFound('no such console asset');
    return secure(reply).header('cache-control', 'public, max-age=31536000, immutable').type(type).send(readFileSync(file));
  });
  // Every other /console path is a screen of the single-page app (its router reads the path).
  app.get('/console/', async (request, reply) => page(request, reply));
  app.get('/console/*', async (request, reply) => {
    if (request.url.startsWith('/console/api/')) throw errors.notFound('no such route');
    return page(request, reply);
  });
}
