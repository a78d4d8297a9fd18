import { consoleCatalogue } from '../console/catalogue.js';
import { apiKeysCatalogue } from '../management/api-keys/catalogue.js';
import { brandingCatalogue } from '../management/branding/catalogue.js';
import { clientsCatalogue } from '../management/clients/catalogue.js';
import { connectedAccountsCatalogue, connectProvidersCatalogue } from '../management/connect/catalogue.js';
import { credentialsCatalogue } from '../management/credentials/catalogue.js';
import { directoryCatalogue } from '../management/directory/catalogue.js';
import { emailCatalogue } from '../management/email/catalogue.js';
import { invitationsCatalogue } from '../management/invitations/catalogue.js';
import { mcpCatalogue } from '../management/mcp/catalogue.js';
import { membersCatalogue } from '../management/members/catalogue.js';
import { mfaPolicyCatalogue } from '../management/mfa-policy/catalogue.js';
import { organizationsCatalogue } from '../management/organizations/catalogue.js';
import { resourceServersCatalogue } from '../management/resource-servers/catalogue.js';
import { rolesCatalogue } from '../management/roles/catalogue.js';
import { signinPolicyCatalogue } from '../management/signin-policy/catalogue.js';
import { socialCatalogue } from '../management/social/catalogue.js';
import { ssoCatalogue } from '../management/sso/catalogue.js';
import { transfersCatalogue } from '../management/transfers/catalogue.js';
import { usersCatalogue } from '../management/users/catalogue.js';
import { webauthnPolicyCatalogue } from '../management/webauthn-policy/catalogue.js';
import { webhooksCatalogue } from '../management/webhooks/catalogue.js';
import { oauthCatalogue } from '../oauth/catalogue.js';
import { signinCatalogue } from '../signin/catalogue.js';
import { tenantsCatalogue } from '../tenants/catalogue.js';

/** An event type's entry: whether webhook endpoints receive it, and what it means. */
export interface EventDeclaration {
  webhook: boolean;
  description: string;
}

/**
 * Every module that records events, each declaring its own in its catalogue.ts (data only): the
 * /v1 features in management/<feature>/catalogue.ts, beside their permissions; the rest (OAuth,
 * sign-in, the console's administrators, tenants) in their own room. A new module joins this list.
 */
const DECLARED = [
  apiKeysCatalogue,
  organizationsCatalogue,
  usersCatalogue,
  emailCatalogue,
  transfersCatalogue,
  consoleCatalogue,
  membersCatalogue,
  invitationsCatalogue,
  rolesCatalogue,
  webhooksCatalogue,
  oauthCatalogue,
  credentialsCatalogue,
  directoryCatalogue,
  ssoCatalogue,
  socialCatalogue,
  signinCatalogue,
  clientsCatalogue,
  resourceServersCatalogue,
  tenantsCatalogue,
  webauthnPolicyCatalogue,
  mfaPolicyCatalogue,
  signinPolicyCatalogue,
  brandingCatalogue,
  connectProvidersCatalogue,
  connectedAccountsCatalogue,
  mcpCatalogue,
] as const satisfies readonly { events: Readonly<Record<string, EventDeclaration>> }[];

type Declared = (typeof DECLARED)[number];

export type EventType = Declared extends infer C ? (C extends { events: infer E } ? keyof E & string : never) : never;

/**
 * The event catalogue: every audit event type Keyhall emits. `webhook: true` marks the types
 * delivered to webhook endpoints (the spec's catalogue); every other type is available only from
 * GET /v1/events. docs/events.md mirrors this list. Each type is declared by the module that records it
 * (DECLARED above), the same type never twice.
 */
export const EVENT_TYPES: Readonly<Record<EventType, EventDeclaration>> = Object.fromEntries(
  DECLARED.flatMap((c) => Object.entries(c.events)).map(([type, declaration], _, all) => {
    if (all.filter(([other]) => other === type).length > 1) throw new Error(`event type ${type} is declared twice`);
    return [type, declaration];
  }),
) as Record<EventType, EventDeclaration>;

export const WEBHOOK_EVENT_TYPES = (Object.keys(EVENT_TYPES) as EventType[]).filter((t) => EVENT_TYPES[t].webhook);

export const isEventType = (t: string): t is EventType => Object.hasOwn(EVENT_TYPES, t);

/** Who acts: an API key, a user (the console's administrator included), a directory connection, Keyhall itself, an OAuth client. */
export const ACTOR_TYPES = ['api_key', 'user', 'scim', 'system', 'oauth_client'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export interface Actor {
  type: ActorType;
  id: string | null;
}
