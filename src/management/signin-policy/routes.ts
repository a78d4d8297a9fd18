import { z } from 'zod';
import { tenantOf } from '../../http/tenant.js';
import { PASSWORDLESS_METHODS, SIGNUP_MODES } from '../../storage/repos/signup.js';
import { errorResponse } from '../common.js';
import { defineFeature } from '../feature.js';
import { actorOf } from '../principal.js';

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

const policySchema = z.object({
  signup: z.enum(SIGNUP_MODES),
  signup_domains: z.array(z.string()),
  passwordless: z.array(z.enum(PASSWORDLESS_METHODS)),
  require_verified_email: z.boolean(),
  updated_at: z.string().nullable(),
});

const body = z.strictObject({
  signup: z.enum(SIGNUP_MODES),
  signup_domains: z.array(z.string().regex(DOMAIN, 'must be a domain name such as example.com')).max(100).default([]),
  passwordless: z.array(z.enum(PASSWORDLESS_METHODS)).max(2).default([]),
  require_verified_email: z.boolean().default(false),
});

// The sign-in policy is guarded by the MFA policy's permissions: both say how people sign in to
// the tenant (docs/signup.md, "Permission").
export const signinPolicyFeature = defineFeature({
  tags: [{ name: 'signin_policy', description: "The tenant's sign-in policy: self sign-up, passwordless sign-in by email, verified email required" }],
  routes: (r, { signinPolicy: service }) => {
    r.get('/signin_policy', {
      config: {
        permission: 'mfa_policy:read',
        access: 'platform',
        operation: { operationId: 'getSigninPolicy', ok: "The tenant's sign-in policy (the defaults when never set)" },
      },
      schema: { summary: "The tenant's sign-in policy (the defaults when never set)", response: { 200: policySchema } },
      handler: async (request) => service.get(tenantOf(request).id),
    });

    r.put('/signin_policy', {
      config: { permission: 'mfa_policy:write', access: 'platform', operation: { operationId: 'setSigninPolicy', ok: 'The policy as stored' } },
      schema: {
        summary: 'Set the sign-in policy: sign-up off, open or limited to domains; passwordless methods by email; verified email required',
        body,
        response: { 200: policySchema, 400: errorResponse },
      },
      handler: async (request) => service.put(tenantOf(request).id, actorOf(request), request.body),
    });
  },
});
