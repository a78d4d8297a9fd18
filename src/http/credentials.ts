/**
 * Fastify bindings of the OID4VCI credential issuer: issuer metadata, SD-JWT VC issuer keys, the
 * offer by reference, the nonce and credential endpoints and the status lists. The rules live in
 * src/credentials/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CREDENTIAL_ISSUER_METADATA_PATH, CREDENTIAL_PATH, JWT_VC_ISSUER_PATH, NONCE_PATH, OFFER_PATH, STATUS_LIST_PATH } from '../credentials/protocol.js';
import { credentialErrors, type CredentialService, type IssuerTenant } from '../credentials/service.js';
import { errors } from '../kernel/errors.js';
import type { OAuthServer } from '../oauth/compose.js';
import { CREDENTIAL_OFFER_CLAIM } from '../oauth/tokens/access-token.js';
import { requireAccessToken } from './oauth/guard.js';
import { noStore } from './oauth/request.js';
import { tenantOf } from './tenant.js';

const issuerTenant = (request: FastifyRequest): IssuerTenant => {
  const t = tenantOf(request);
  return { id: t.id, issuer: t.issuer, name: t.host };
};

/** Read-only, credential-less documents: any origin may read them. */
const cors = (reply: FastifyReply) => reply.header('access-control-allow-origin', '*');

const REF = /^[A-Za-z0-9_-]{43}$/;
const LIST_ID = /^sl_[0-9a-z]{26}$/;

export async function credentialRoutes(
  app: FastifyInstance,
  opts: { oauth: Pick<OAuthServer, 'guard'>; credentials: CredentialService; statusListTtlSeconds: number },
): Promise<void> {
  const { credentials } = opts;

  app.get(CREDENTIAL_ISSUER_METADATA_PATH, async (request, reply) =>
    cors(reply)
      .header('cache-control', 'public, max-age=300')
      .send(await credentials.issuerMetadata(issuerTenant(request))),
  );
  app.get(JWT_VC_ISSUER_PATH, async (request, reply) =>
    cors(reply)
      .header('cache-control', 'public, max-age=300')
      .send(await credentials.jwtVcIssuer(issuerTenant(request))),
  );

  app.get<{ Params: { ref: string } }>(`${OFFER_PATH}/:ref`, async (request, reply) => {
    if (!REF.test(request.params.ref)) throw errors.notFound('no such credential offer, or it was used or has expired');
    return noStore(cors(reply)).send(await credentials.offerByReference(issuerTenant(request), request.params.ref));
  });

  app.post(NONCE_PATH, async (request, reply) => noStore(reply).send(await credentials.newNonce(tenantOf(request).id)));

  // The credential endpoint takes JSON only (OID4VCI §8.2); any other body is invalid_credential_request.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body as string));
      } catch {
        done(credentialErrors.invalidCredentialRequest('the body is not valid JSON'), undefined);
      }
    });
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) =>
      done(credentialErrors.invalidCredentialRequest('the body must be application/json'), undefined),
    );
    scope.post(CREDENTIAL_PATH, { preHandler: requireAccessToken(opts.oauth, { credentialEndpoint: true }) }, async (request, reply) => {
      const offerId = request.accessToken![CREDENTIAL_OFFER_CLAIM] as string;
      return noStore(reply).send(await credentials.issue(issuerTenant(request), offerId, request.body));
    });
  });

  app.get<{ Params: { listId: string } }>(`${STATUS_LIST_PATH}/:listId`, async (request, reply) => {
    if (!LIST_ID.test(request.params.listId)) throw errors.notFound('no such status list');
    const jwt = await credentials.statusList(issuerTenant(request), request.params.listId);
    return cors(reply).header('cache-control', `public, max-age=${opts.statusListTtlSeconds}`).type('application/statuslist+jwt').send(jwt);
  });
}
