import { apiKeysCatalogue } from './api-keys/catalogue.js';
import { brandingCatalogue } from './branding/catalogue.js';
import { clientsCatalogue } from './clients/catalogue.js';
import { connectedAccountsCatalogue, connectProvidersCatalogue } from './connect/catalogue.js';
import { credentialsCatalogue } from './credentials/catalogue.js';
import { directoryCatalogue } from './directory/catalogue.js';
import { eventsCatalogue } from './events/catalogue.js';
import { invitationsCatalogue } from './invitations/catalogue.js';
import { membersCatalogue } from './members/catalogue.js';
import { mfaPolicyCatalogue } from './mfa-policy/catalogue.js';
import { organizationsCatalogue } from './organizations/catalogue.js';
import { resourceServersCatalogue } from './resource-servers/catalogue.js';
import { rolesCatalogue } from './roles/catalogue.js';
import { signinPolicyCatalogue } from './signin-policy/catalogue.js';
import { socialCatalogue } from './social/catalogue.js';
import { ssoCatalogue } from './sso/catalogue.js';
import { transfersCatalogue } from './transfers/catalogue.js';
import { usersCatalogue } from './users/catalogue.js';
import { webauthnPolicyCatalogue } from './webauthn-policy/catalogue.js';
import { webhooksCatalogue } from './webhooks/catalogue.js';

/**
 * The features that declare permissions (each in its catalogue.ts, beside its events), in the
 * catalogue's order: a key's stored scopes and docs/permissions.md follow it, so a new feature
 * joins at the end.
 */
const DECLARED = [
  organizationsCatalogue,
  usersCatalogue,
  membersCatalogue,
  apiKeysCatalogue,
  clientsCatalogue,
  resourceServersCatalogue,
  webhooksCatalogue,
  directoryCatalogue,
  connectProvidersCatalogue,
  ssoCatalogue,
  connectedAccountsCatalogue,
  webauthnPolicyCatalogue,
  mfaPolicyCatalogue,
  credentialsCatalogue,
  eventsCatalogue,
  brandingCatalogue,
  rolesCatalogue,
  socialCatalogue,
  transfersCatalogue,
  invitationsCatalogue,
  signinPolicyCatalogue,
] as const;

export type Permission = (typeof DECLARED)[number]['permissions'][number];

/**
 * The permission catalogue: every scope an API key may hold. docs/permissions.md mirrors it, and
 * each /v1 route declares the one permission it needs.
 */
export const PERMISSIONS: readonly Permission[] = DECLARED.flatMap((c) => c.permissions).filter((p, i, all) => {
  if (all.indexOf(p) !== i) throw new Error(`permission ${p} is declared twice`);
  return true;
});

const known = new Set<string>(PERMISSIONS);
export const isPermission = (scope: string): scope is Permission => known.has(scope);

/**
 * Permissions only a platform key holding every permission may carry (and a console
 * administrator, who acts with every permission): `domains:verify` takes an actor's word that an
 * organization owns a domain, which makes that organization's IdP authoritative for its emails
 * (docs/sso.md, "Trust boundaries").
 */
export const FULL_PRIVILEGE_ONLY: readonly Permission[] = ['domains:verify'];

/** Whether a key (its binding and scopes) holds every permission of the catalogue as a platform key. */
export const holdsEveryPermission = (key: { organizationId: string | null; scopes: Iterable<string> }): boolean => {
  const held = new Set(key.scopes);
  return key.organizationId === null && PERMISSIONS.every((p) => held.has(p));
};
