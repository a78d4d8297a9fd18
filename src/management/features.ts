import { apiKeysFeature } from './api-keys/routes.js';
import { brandingFeature } from './branding/routes.js';
import { clientsFeature } from './clients/routes.js';
import { connectFeature } from './connect/routes.js';
import { credentialsFeature } from './credentials/routes.js';
import { directoryFeature } from './directory/routes.js';
import { emailFeature } from './email/routes.js';
import { eventsFeature } from './events/routes.js';
import type { ManagementFeature } from './feature.js';
import { invitationsFeature } from './invitations/routes.js';
import { mcpSettingsFeature } from './mcp/routes.js';
import { membersFeature } from './members/routes.js';
import { mfaPolicyFeature } from './mfa-policy/routes.js';
import { organizationsFeature } from './organizations/routes.js';
import { resourceServersFeature } from './resource-servers/routes.js';
import { rolesFeature } from './roles/routes.js';
import { signinPolicyFeature } from './signin-policy/routes.js';
import { socialFeature } from './social/routes.js';
import { ssoFeature } from './sso/routes.js';
import { transfersFeature } from './transfers/routes.js';
import { usersFeature } from './users/routes.js';
import { webauthnPolicyFeature } from './webauthn-policy/routes.js';
import { webhooksFeature } from './webhooks/routes.js';

/**
 * Every feature of the management API, in the order its routes are registered and its tags
 * listed. A new feature exports a ManagementFeature from its routes.ts and joins this list:
 * nothing else names it.
 */
export const MANAGEMENT_FEATURES: readonly ManagementFeature[] = [
  organizationsFeature,
  usersFeature,
  membersFeature,
  invitationsFeature,
  apiKeysFeature,
  eventsFeature,
  directoryFeature,
  clientsFeature,
  resourceServersFeature,
  rolesFeature,
  webhooksFeature,
  webauthnPolicyFeature,
  mfaPolicyFeature,
  signinPolicyFeature,
  connectFeature,
  ssoFeature,
  credentialsFeature,
  mcpSettingsFeature,
  brandingFeature,
  socialFeature,
  emailFeature,
  transfersFeature,
];
