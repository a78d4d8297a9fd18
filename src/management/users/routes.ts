import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';
import { passkeyView, sessionView, userView } from './views.js';

const email = z.string().trim().max(254).email();
const password = z.string().min(8).max(256);
const name = z.string().trim().min(1).max(200);

/** A metadata object: JSON, at most 16 KB serialized and 5 levels deep (docs/authorization.md). */
const METADATA_MAX_BYTES = 16 * 1024;
const METADATA_MAX_DEPTH = 5;
const depthOf = (v: unknown): number =>
  v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depthOf)) : 0;
const metadata = z
  .record(z.string().min(1).max(128), z.unknown())
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= METADATA_MAX_BYTES, `must be at most ${METADATA_MAX_BYTES} bytes as JSON`)
  .refine((m) => depthOf(m) <= METADATA_MAX_DEPTH, `must nest at most ${METADATA_MAX_DEPTH} levels`);
const metadataFields = {
  metadata: metadata.optional().describe('Public metadata: a JSON object (16 KB, 5 levels), replaced as a whole; claims mappings may read it'),
  private_metadata: metadata.optional().describe('Private metadata: a JSON object (16 KB, 5 levels), replaced as a whole; never shown to the user'),
};

export const userSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    email_verified: z.boolean(),
    has_password: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
    private_metadata: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'User' });

const params = z.strictObject({ userId: idOf('user') });
const userList = listing('users');
const passkeyList = listing('passkeys');
const sessionList = listing('sessions');

export const usersFeature = defineFeature({
  tags: [{ name: 'users', description: 'Tenant-wide user accounts' }],
  routes: (r, { users: service, email: mail }) => {
    r.post('/users', {
      config: { permission: 'users:write', access: 'platform', operation: { operationId: 'createUser', ok: 'The user created', errors: [409] } },
      schema: {
        summary: 'Create a user (tenant-wide); the password is stored as an argon2id hash',
        body: z.strictObject({ email, name: name.optional(), password: password.optional(), ...metadataFields }),
        response: { 201: userSchema, 400: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        const user = await service.create(tenantOf(request).id, actorOf(request), request.body);
        return reply.code(201).send(userView(user));
      },
    });

    r.get('/users', {
      config: { permission: 'users:read', access: 'platform', operation: { operationId: 'listUsers', ok: 'A page of users, oldest first' } },
      schema: { summary: 'List users', querystring: userList.query.extend({ email: email.optional() }), response: { 200: pageResponse(userSchema) } },
      handler: async (request) => {
        const { limit, after, email: byEmail } = request.query;
        const rows = await service.list(tenantOf(request).id, after, limit + 1, byEmail);
        const p = userList.page(rows, limit, (u) => u.id);
        return { ...p, data: p.data.map(userView) };
      },
    });

    r.get('/users/:userId', {
      config: { permission: 'users:read', access: 'platform', operation: { operationId: 'getUser', ok: 'The user' } },
      schema: { summary: 'Get a user', params, response: { 200: userSchema, 404: errorResponse } },
      handler: async (request) => userView(await service.get(tenantOf(request).id, request.params.userId)),
    });

    r.patch('/users/:userId', {
      config: { permission: 'users:write', access: 'platform', operation: { operationId: 'updateUser', ok: 'The user as updated', errors: [409] } },
      schema: {
        summary: 'Update a user (a new email applies at once, unverified unless email_verified is given, and a verification message goes to it)',
        params,
        body: z.strictObject({
          email: email.optional(),
          name: name.nullable().optional(),
          password: password.optional(),
          email_verified: z.boolean().optional().describe("Whether the address is verified (audited; a tenant administrator's needs every permission)"),
          ...metadataFields,
        }),
        response: { 200: userSchema, 400: errorResponse, 403: errorResponse, 404: errorResponse, 409: errorResponse },
      },
      handler: async (request) => {
        const tenant = tenantOf(request);
        // A new address is unverified (unless email_verified says so) and gets a verification message (docs/account.md).
        const user = await service.update(tenant.id, actorOf(request), request.params.userId, request.body, (trx, u) => mail.queueVerification(trx, tenant, u));
        mail.poke();
        return userView(user);
      },
    });

    const sessionSchema = z
      .object({
        id: z.string(),
        created_at: z.string(),
        auth_time: z.string().describe('When the user last authenticated in this session (a second factor moves it)'),
        last_seen_at: z.string(),
        idle_expires_at: z.string().describe('The session ends here unless it is used before'),
        expires_at: z.string().describe('The absolute end of the session'),
        amr: z.array(z.string()).describe('RFC 8176 authentication methods of the login'),
        acr: z.enum(['pwd', 'mfa', 'phr']).describe('The authentication context class the amr amounts to'),
        mfa_pending: z.boolean().describe('The password was checked but the second factor is still owed'),
        user_agent: z.string().nullable(),
        device: z.string().nullable().describe('A short summary of the user agent: browser and system ("Firefox on Linux"), null when unknown'),
        ip: z.string().nullable(),
        method: z.string().describe('How the first factor was given: password, passkey, sso, social, setup_link or email (docs/account.md)'),
        idp: z.string().nullable().describe("The social connection of a social sign-in (the ID token's idp), else null"),
      })
      .meta({ id: 'Session', description: 'A hosted-login session (never its cookie value or hash)' });

    r.get('/users/:userId/sessions', {
      config: {
        permission: 'users:read',
        access: 'platform',
        operation: { operationId: 'listUserSessions', ok: "A page of the user's live hosted-login sessions, oldest first (never a cookie value)" },
      },
      schema: {
        summary: "List a user's live hosted-login sessions (oldest first)",
        params,
        querystring: sessionList.query,
        response: { 200: pageResponse(sessionSchema), 400: errorResponse, 404: errorResponse },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.listSessions(tenantOf(request).id, request.params.userId, after, limit + 1);
        const p = sessionList.page(rows, limit, (s) => s.id);
        return { ...p, data: p.data.map(sessionView) };
      },
    });

    r.delete('/users/:userId/sessions/:sessionId', {
      config: {
        permission: 'users:write',
        access: 'platform',
        operation: { operationId: 'revokeUserSession', ok: 'The session is ended, at once on every instance' },
      },
      schema: {
        summary: "End one of a user's hosted-login sessions",
        params: z.strictObject({ userId: idOf('user'), sessionId: idOf('ses') }),
        response: { 204: z.undefined(), 400: errorResponse, 404: errorResponse },
      },
      handler: async (request, reply) => {
        await service.revokeSession(tenantOf(request).id, actorOf(request), request.params.userId, request.params.sessionId);
        return reply.code(204).send();
      },
    });

    r.delete('/users/:userId/sessions', {
      config: {
        permission: 'users:write',
        access: 'platform',
        operation: { operationId: 'revokeUserSessions', ok: 'Every hosted-login session of the user is revoked' },
      },
      schema: { summary: "Revoke all of a user's hosted-login sessions", params, response: { 204: z.undefined(), 404: errorResponse } },
      handler: async (request, reply) => {
        await service.revokeSessions(tenantOf(request).id, actorOf(request), request.params.userId);
        return reply.code(204).send();
      },
    });

    const passkeySchema = z.object({
      id: z.string(),
      name: z.string(),
      aaguid: z.string(),
      transports: z.array(z.string()),
      attestation_verified: z.boolean(),
      created_at: z.string(),
      last_used_at: z.string().nullable(),
      disabled_at: z
        .string()
        .nullable()
        .describe(
          'When the passkey was disabled because its signature counter went backwards (a possible copy); a disabled passkey signs nothing in until it is removed',
        ),
    });

    r.get('/users/:userId/passkeys', {
      config: {
        permission: 'users:read',
        access: 'platform',
        operation: { operationId: 'listUserPasskeys', ok: "A page of the user's passkeys (no key material)" },
      },
      schema: {
        summary: "List a user's passkeys (no key material)",
        params,
        querystring: passkeyList.query,
        response: { 200: pageResponse(passkeySchema), 404: errorResponse },
      },
      handler: async (request) =>
        passkeyList.pageAll((await service.listPasskeys(tenantOf(request).id, request.params.userId)).map(passkeyView), request.query, (p) => p.id),
    });

    r.delete('/users/:userId/passkeys/:passkeyId', {
      config: {
        permission: 'users:write',
        access: 'platform',
        operation: { operationId: 'deleteUserPasskey', ok: 'The passkey is removed; it can no longer sign in' },
      },
      schema: {
        summary: "Remove one of a user's passkeys",
        params: z.strictObject({ userId: idOf('user'), passkeyId: idOf('pk') }),
        response: { 204: z.undefined(), 404: errorResponse },
      },
      handler: async (request, reply) => {
        await service.deletePasskey(tenantOf(request).id, actorOf(request), request.params.userId, request.params.passkeyId);
        return reply.code(204).send();
      },
    });

    r.delete('/users/:userId', {
      config: { permission: 'users:write', access: 'platform', operation: { operationId: 'deleteUser', ok: 'Deleted, with their memberships' } },
      schema: {
        summary: 'Delete a user and their memberships (not a tenant administrator: remove the role first)',
        params,
        response: { 204: z.undefined(), 404: errorResponse, 409: errorResponse },
      },
      handler: async (request, reply) => {
        await service.delete(tenantOf(request).id, actorOf(request), request.params.userId);
        return reply.code(204).send();
      },
    });
  },
});
