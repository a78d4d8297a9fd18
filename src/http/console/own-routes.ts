/**
 * The console's own routes behind the administrator's session (docs/console.md): the overview's
 * exact counts and the administrators (the `tenant_admin` role, and the look-up of an account
 * before it is granted: who besides the tenant controls it). Everything else under
 * /console/api is the /v1 management routes themselves.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ConsoleOverview } from '../../console/overview.js';
import { accountFingerprint, type ConsoleAdmins } from '../../console/service.js';
import { iso } from '../../management/common.js';
import { actorOf } from '../../management/principal.js';
import { currentPasswordSetBy, type PasswordSetBy } from '../../storage/repos/users.js';
import { tenantOf } from '../tenant.js';
import { validatorCompiler } from '../validation.js';

export interface ConsoleOwnRoutesOptions {
  admins: ConsoleAdmins;
  overview: ConsoleOverview;
}

const email = z.string().trim().max(254).email();
const userId = z
  .string()
  .max(64)
  .regex(/^user_[0-9a-z]+$/, 'must be an id starting with user_');

/** Who set the password, as the look-up shows it (never the tag tying it to the hash). */
const setByView = (by: PasswordSetBy | null) => by && { type: by.type, id: by.id, every_permission: by.every_permission };

const adminOf = (a: { userId: string; email: string; grantedAt: number }) => ({ user_id: a.userId, email: a.email, granted_at: iso(a.grantedAt) });

export async function consoleOwnRoutes(app: FastifyInstance, opts: ConsoleOwnRoutesOptions): Promise<void> {
  const { admins, overview } = opts;
  app.setValidatorCompiler(validatorCompiler);
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/overview', async (request) => overview.counts(tenantOf(request).id));

  r.get('/admins', async (request) => ({
    data: (await admins.list(tenantOf(request).id)).map((a) => adminOf({ userId: a.userId, email: a.email, grantedAt: a.createdAt })),
  }));

  // Who the account is before it is made an administrator: where it came from (an organization's
  // SCIM directory, its SSO connections), who set its password, and its memberships. The screen then grants by user_id,
  // the account it showed.
  r.get('/admins/candidate', { schema: { querystring: z.strictObject({ email }) } }, async (request) => {
    const c = await admins.candidate(tenantOf(request).id, request.query.email);
    return {
      user: { id: c.user.id, email: c.user.email, created_at: iso(c.user.createdAt) },
      already_admin: c.alreadyAdmin,
      // Whoever set the password knows it: a narrower key (every_permission false) that did
      // could sign in as the administrator. null with has_password: set before it was recorded.
      has_password: c.user.passwordHash !== null,
      password_set_by: setByView(currentPasswordSetBy(c.user)),
      // Sent back with the grant: the account must still be as shown (409 otherwise).
      fingerprint: accountFingerprint(c.user),
      managed_by: c.directories.map((d) => ({
        kind: 'directory' as const,
        organization_id: d.organizationId,
        organization_name: d.organizationName,
        connection_id: d.connectionId,
        connection_name: d.connectionName,
      })),
      sso: c.sso.map((x) => ({
        organization_id: x.organizationId,
        organization_name: x.organizationName,
        connection_id: x.connectionId,
        connection_name: x.connectionName,
        protocol: x.protocol,
      })),
      verified_domain: c.verifiedDomain && {
        organization_id: c.verifiedDomain.organizationId,
        organization_name: c.verifiedDomain.organizationName,
        domain: c.verifiedDomain.domain,
      },
      organizations: c.organizations.first.map((o) => ({ id: o.organizationId, name: o.name, role: o.role })),
      organizations_total: c.organizations.total,
    };
  });

  const grantBody = z
    .strictObject({
      email: email.optional(),
      user_id: userId.optional(),
      fingerprint: z
        .string()
        .regex(/^[0-9a-f]{32}$/)
        .optional(),
    })
    .refine((b) => (b.email === undefined) !== (b.user_id === undefined), { message: 'send exactly one of email and user_id' });
  r.post('/admins', { schema: { body: grantBody } }, async (request, reply) => {
    const { email: byEmail, user_id, fingerprint } = request.body;
    const who = user_id !== undefined ? { userId: user_id } : { email: byEmail! };
    const { user, grantedAt } = await admins.grantExisting(tenantOf(request).id, actorOf(request), who, fingerprint);
    return reply.code(201).send(adminOf({ userId: user.id, email: user.email, grantedAt }));
  });

  r.delete('/admins/:userId', { schema: { params: z.strictObject({ userId }) } }, async (request, reply) => {
    await admins.revokeBy(tenantOf(request).id, actorOf(request), request.params.userId);
    return reply.code(204).send();
  });
}
