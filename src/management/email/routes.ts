import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { errorResponse, idOf, iso, listing, pageResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';

const address = z.string().trim().max(254).email();
const settingsSchema = z
  .object({
    from_address: z.string().nullable(),
    from_name: z.string().nullable(),
    reply_to: z.string().nullable(),
    default_from: z.string(),
    transport: z.enum(['smtp', 'dev_mailbox']),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'EmailSettings' });
const emailSchema = z
  .object({
    id: z.string(),
    to: z.string(),
    template: z.string(),
    status: z.enum(['pending', 'sending', 'sent', 'failed']),
    message_id: z.string(),
    user_id: z.string().nullable(),
    attempts: z.number(),
    last_error: z.string().nullable(),
    transport: z.string().nullable(),
    created_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .meta({ id: 'OutboxEmail' });
const outboxList = listing('email_outbox');

/** Email (docs/email.md): the tenant's sender, the outbox, verification emails. */
export const emailFeature = defineFeature({
  tags: [{ name: 'email', description: "Email: the tenant's sender, the outbox (and the dev mailbox), verification emails" }],
  routes: (r, { email: service }) => {
    r.get('/email_settings', {
      config: {
        permission: 'branding:read',
        access: 'platform',
        operation: { operationId: 'getEmailSettings', ok: "The tenant's sender and the transport in use" },
      },
      schema: {
        summary: "The tenant's email sender (from, reply-to) and whether mail is sent (smtp) or kept in the dev mailbox",
        response: { 200: settingsSchema },
      },
      handler: async (request) => service.settings(tenantOf(request)),
    });

    r.put('/email_settings', {
      config: { permission: 'branding:write', access: 'platform', operation: { operationId: 'setEmailSettings', ok: 'The settings as stored' } },
      schema: {
        summary:
          "Set the tenant's email sender; null restores the default (KEYHALL_EMAIL_FROM, or no-reply@ the tenant's host). SPF/DKIM for that domain are the domain's business",
        body: z.strictObject({
          from_address: address.nullable(),
          from_name: z
            .string()
            .trim()
            .min(1)
            .max(100)
            .regex(/^[^\r\n<>"\\]+$/, 'must not contain line breaks, <, >, " or \\')
            .nullable(),
          reply_to: address.nullable(),
        }),
        response: { 200: settingsSchema, 400: errorResponse },
      },
      handler: async (request) => service.putSettings(tenantOf(request), actorOf(request), request.body),
    });

    r.get('/email_outbox', {
      config: {
        permission: 'users:read',
        access: 'platform',
        operation: { operationId: 'listEmailOutbox', ok: 'A page of emails, newest first (never their body or links)' },
      },
      schema: {
        summary: 'The email outbox, newest first: recipient, template, status, Message-ID (the message itself is kept only until sent)',
        querystring: outboxList.query,
        response: { 200: pageResponse(emailSchema) },
      },
      handler: async (request) => {
        const { limit, after } = request.query;
        const rows = await service.listOutbox(tenantOf(request).id, after, limit + 1);
        const p = outboxList.page(rows, limit, (e) => e.id);
        return {
          ...p,
          data: p.data.map((e) => ({
            id: e.id,
            to: e.recipient,
            template: e.template,
            status: e.status,
            message_id: e.messageId,
            user_id: e.userId,
            attempts: e.attempts,
            last_error: e.lastError,
            transport: e.transport,
            created_at: iso(e.createdAt),
            sent_at: e.sentAt === null ? null : iso(e.sentAt),
          })),
        };
      },
    });

    r.post('/users/:userId/verification_email', {
      config: {
        permission: 'users:write',
        access: 'platform',
        operation: { operationId: 'sendVerificationEmail', ok: 'The email is in the outbox', errors: [409] },
      },
      schema: {
        summary: 'Send the user an email to confirm their address: a link (24 h) and a 6-digit code (10 min); earlier ones stop working',
        params: z.strictObject({ userId: idOf('user') }),
        response: {
          202: z.object({ email_id: z.string(), link_expires_at: z.string(), code_expires_at: z.string() }),
          404: errorResponse,
          409: errorResponse,
        },
      },
      handler: async (request, reply) => reply.code(202).send(await service.requestVerification(tenantOf(request), actorOf(request), request.params.userId)),
    });
  },
});
