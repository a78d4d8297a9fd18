/**
 * The hosted /connect screens of the connected-accounts vault (session cookie): the list of the
 * user's accounts with Disconnect, the start page (organization, scopes) that sends the browser
 * upstream, and the callback. Errors are pages; the only redirects go to this tenant's pages or
 * to the provider's registered authorization endpoint (never to a URL from the request).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VaultService } from '../../connect/vault.js';
import { errors } from '../../kernel/errors.js';
import { en } from '../../screens/i18n/index.js';
import { connectListPage, connectStartPage } from '../../screens/pages.js';
import type { SigninService } from '../../screens/service.js';
import { field } from '../form.js';
import { tenantOf } from '../tenant.js';
import { sendPage } from './csp.js';
import { csrfFor, csrfOk } from './csrf.js';
import { seeOther, sendErrorPage } from './outcome.js';
import { currentSession } from './session-cookie.js';

export interface ConnectScreenOptions {
  vault: VaultService;
  signin: SigninService;
}

export async function connectScreenRoutes(app: FastifyInstance, opts: ConnectScreenOptions): Promise<void> {
  const { vault, signin } = opts;
  const toLogin = (reply: FastifyReply, path: string) => seeOther(reply, `/login?return_to=${encodeURIComponent(path)}`);
  const rejectCsrf = (request: FastifyRequest, reply: FastifyReply) => sendErrorPage(request, reply, errors.csrfFailed());

  app.get('/connect', async (request, reply) => {
    const tenant = tenantOf(request);
    const session = await currentSession(signin, request);
    if (!session) return toLogin(reply, '/connect');
    const [user, accounts, providers, organizations] = await Promise.all([
      signin.user(tenant.id, session.userId),
      vault.listForUser(tenant.id, session.userId),
      vault.listProviders(tenant.id),
      vault.organizationsOf(tenant.id, session.userId),
    ]);
    const providerName = new Map(providers.map((p) => [p.id, p.name]));
    const orgName = new Map(organizations.map((o) => [o.id, o.name]));
    const connected = field(request.query, 'connected');
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.connected_accounts' }, (f) =>
      connectListPage(f, {
        csrf,
        email: user?.email ?? '',
        connected: connected && accounts.some((a) => a.id === connected) ? connected : undefined,
        accounts: accounts.map((a) => ({
          id: a.id,
          providerName: providerName.get(a.providerId) ?? a.providerId,
          organizationName: orgName.get(a.organizationId) ?? a.organizationId,
          status: a.status,
          scopes: a.scopes,
        })),
        providers: providers.map((p) => ({ id: p.id, name: p.name })),
      }),
    );
  });

  app.post('/connect/accounts/disconnect', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const session = await currentSession(signin, request);
    if (!session) return toLogin(reply, '/connect');
    try {
      await vault.disconnectOwn(tenantOf(request).id, session.userId, field(request.body, 'account_id') ?? '');
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
    return seeOther(reply, '/connect');
  });

  app.get<{ Params: { providerId: string } }>('/connect/:providerId', async (request, reply) => {
    const tenant = tenantOf(request);
    const { providerId } = request.params;
    const session = await currentSession(signin, request);
    if (!session) return toLogin(reply, `/connect/${providerId}`);
    const provider = await vault.provider(tenant.id, providerId);
    if (!provider) return sendErrorPage(request, reply, errors.notFound(en['error.connect_provider_unknown']));
    const organizations = await vault.organizationsOf(tenant.id, session.userId);
    if (organizations.length === 0) return sendErrorPage(request, reply, errors.forbidden(en['error.connect_no_organization']));
    const csrf = csrfFor(request, reply);
    return sendPage(reply, 200, { title: 'title.connect', titleVars: { provider: provider.name }, formTargets: [provider.authorizationEndpoint] }, (f) =>
      connectStartPage(f, { csrf, providerId: provider.id, providerName: provider.name, scopes: provider.scopes, organizations }),
    );
  });

  app.post<{ Params: { providerId: string } }>('/connect/:providerId', async (request, reply) => {
    if (!csrfOk(request)) return rejectCsrf(request, reply);
    const tenant = tenantOf(request);
    const { providerId } = request.params;
    const session = await currentSession(signin, request);
    if (!session) return toLogin(reply, `/connect/${providerId}`);
    try {
      return seeOther(reply, await vault.startConnect(tenant, session, providerId, field(request.body, 'organization_id') ?? ''));
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
  });

  app.get<{ Params: { providerId: string } }>('/connect/:providerId/callback', async (request, reply) => {
    const tenant = tenantOf(request);
    const session = await currentSession(signin, request);
    const query = new URLSearchParams(request.url.split('?')[1] ?? '');
    try {
      const account = await vault.completeConnect(tenant, session, request.params.providerId, query);
      return seeOther(reply, `/connect?connected=${encodeURIComponent(account.id)}`);
    } catch (err) {
      return sendErrorPage(request, reply, err);
    }
  });
}
