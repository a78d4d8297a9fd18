/**
 * The ceiling: bare Fastify routes doing only the unavoidable work of each endpoint, with the
 * same primitives as Keyhall (no tenant, no database, no logging):
 * - POST /token: form parse + Basic decode + constant-time secret check + one EdDSA JWT signed;
 * - POST /introspect: the same client check + one EdDSA JWT verified + its claims answered;
 * - POST /argon2: one argon2id verification (Keyhall's parameters), for the login ceiling.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { generateKeyPair } from 'jose';
import { KeyObject } from 'node:crypto';
import { compiled } from './compiled.js';
import { BASELINE_PASSWORD } from './fixtures.js';

const { safeEqual } = await compiled<typeof import('../src/kernel/crypto/hash.js')>('kernel/crypto/hash.js');
const { newId } = await compiled<typeof import('../src/kernel/ids.js')>('kernel/ids.js');
const { hashPassword, verifyPassword } = await compiled<typeof import('../src/users/passwords.js')>('users/passwords.js');
const { decodeCompactJws, signEdDsaJwt, verifyEdDsaSignature } = await compiled<typeof import('../src/oauth/tokens/jws.js')>('oauth/tokens/jws.js');

export async function startBaseline(): Promise<{ app: FastifyInstance; port: number; authorization: string; sampleToken: string }> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA');
  const pub = KeyObject.from(publicKey);
  const secret = 'bench-secret-0123456789abcdef0123456789abcdef';
  const authorization = `Basic ${Buffer.from(`cli_bench:${secret}`).toString('base64')}`;
  const passwordHash = await hashPassword(BASELINE_PASSWORD);
  const app = Fastify({ logger: false });
  await app.register(formbody);
  const authenticate = (header: string | undefined): boolean => {
    if (!header?.startsWith('Basic ')) return false;
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon > 0 && decoded.slice(0, colon) === 'cli_bench' && safeEqual(decodeURIComponent(decoded.slice(colon + 1)), secret);
  };
  const sign = () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      iss: 'http://bench',
      sub: 'cli_bench',
      aud: 'http://bench',
      iat: now,
      exp: now + 600,
      client_id: 'cli_bench',
      scope: 'read',
      jti: newId('at'),
    };
    return signEdDsaJwt({ alg: 'EdDSA', typ: 'at+jwt', kid: 'k' }, payload, privateKey);
  };
  app.post('/token', async (request, reply) => {
    if (!authenticate(request.headers.authorization)) return reply.code(401).send({ error: 'invalid_client' });
    return reply.header('cache-control', 'no-store').send({ access_token: sign(), token_type: 'Bearer', expires_in: 600 });
  });
  app.post('/introspect', async (request, reply) => {
    if (!authenticate(request.headers.authorization)) return reply.code(401).send({ error: 'invalid_client' });
    const token = (request.body as { token?: string }).token ?? '';
    const d = decodeCompactJws(token);
    if (!d || !verifyEdDsaSignature(d, pub)) return reply.send({ active: false });
    return reply.header('cache-control', 'no-store').send({ active: true, ...d.payload });
  });
  app.post('/argon2', async (request, reply) => {
    const ok = await verifyPassword(passwordHash, (request.body as { password?: string }).password ?? '');
    return reply.code(ok ? 200 : 401).send({ ok });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, port, authorization, sampleToken: sign() };
}
