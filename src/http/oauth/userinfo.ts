/** Fastify binding of /userinfo (OIDC Core §5.3). Claims: src/oauth/userinfo/claims.ts. */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { errors } from '../../kernel/errors.js';
import type { OAuthServer } from '../../oauth/compose.js';
import { resourceErrors } from '../../oauth/errors.js';
import { PROTECTED_RESOURCE_METADATA_PATH } from '../../oauth/resource-server/guard.js';
import { userInfoClaims, type UserProfileSource } from '../../oauth/userinfo/claims.js';
import { type ClaimMapping, mappedClaims } from '../../oauth/claims-mapping.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { browserCors, type CorsPolicy } from './cors.js';
import { requireAccessToken } from './guard.js';
import { noStore, oauthHeaders } from './request.js';

export const USERINFO_PATH = '/userinfo';

export async function userinfoRoutes(
  app: FastifyInstance,
  opts: {
    oauth: Pick<OAuthServer, 'guard'>;
    profiles: UserProfileSource;
    cors: CorsPolicy;
    /** The claims mapping of the token's client (src/oauth/claims-mapping.ts). */
    clientClaims: (tenantId: string, clientId: string) => Promise<readonly ClaimMapping[]>;
  },
): Promise<void> {
  const { oauth, profiles } = opts;
  browserCors(app, opts.cors, { [USERINFO_PATH]: ['GET', 'POST'] });
  // The token must carry `openid`.
  const headerGuard = requireAccessToken(oauth, { scope: 'openid' });
  // RFC 6750 §2.2: a POST may carry the token as the form parameter `access_token` instead
  // (never both; never the query string). It goes through the same guard as a Bearer token.
  const guard: preHandlerAsyncHookHandler = async function (request, reply) {
    const bodyToken = request.method === 'POST' ? field(request.body, 'access_token') : undefined;
    if (bodyToken === undefined) return headerGuard.call(this, request, reply);
    if (request.headers.authorization !== undefined) throw errors.invalidRequest('send the access token in one way only');
    const tenant = tenantOf(request);
    request.accessToken = await oauth.guard(
      { method: 'POST', url: `${tenant.issuer}${USERINFO_PATH}`, headers: { ...oauthHeaders(request.raw), authorization: [`Bearer ${bodyToken}`] } },
      tenant,
      { resource: tenant.issuer, scope: 'openid' },
    );
  };
  const userinfo = async (request: FastifyRequest, reply: FastifyReply) => {
    const tenant = tenantOf(request);
    const token = request.accessToken!;
    const profile = await profiles.profile(tenant.id, token.sub);
    if (!profile) {
      throw resourceErrors.invalidToken(
        { scheme: token.cnf?.jkt ? 'DPoP' : 'Bearer', resourceMetadata: `${tenant.issuer}${PROTECTED_RESOURCE_METADATA_PATH}` },
        'the token does not name a user',
      );
    }
    // Mapped claims first: the scoped claims (sub, email, name…) always win.
    const mapped = mappedClaims(await opts.clientClaims(tenant.id, token.client_id), 'userinfo', profile);
    return noStore(reply).send({ ...mapped, ...userInfoClaims(profile, (token.scope ?? '').split(' ')) });
  };
  app.get(USERINFO_PATH, { preHandler: guard }, userinfo);
  app.post(USERINFO_PATH, { preHandler: guard }, userinfo);
}
