/**
 * The yardstick: a bare Fastify route that only signs one EdDSA JWT (no tenant, no database),
 * with the same signer as /token so the comparison measures everything else.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { generateKeyPair } from 'jose';
import { signEdDsaJwt } from '../src/oauth/tokens/jws.js';

export async function startBaseline(): Promise<{ app: FastifyInstance; url: string }> {
  const { privateKey } = await generateKeyPair('EdDSA');
  const app = Fastify({ logger: false });
  await app.register(formbody);
  app.post('/token', async (_request, reply) => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: 'http://bench', sub: 'cli_bench', aud: 'http://bench', iat: now, exp: now + 600, client_id: 'cli_bench', scope: 'read', jti: randomBytes(16).toString('base64url') };
    const token = signEdDsaJwt({ alg: 'EdDSA', typ: 'at+jwt', kid: 'k' }, payload, privateKey);
    return reply.header('cache-control', 'no-store').send({ access_token: token, token_type: 'Bearer', expires_in: 600 });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, url: `http://127.0.0.1:${port}/token` };
}
