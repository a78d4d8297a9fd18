/**
 * Provider presets, as data: the endpoints, defaults and quirks of well-known upstreams, so an
 * operator gives only a name, a client id and a secret (fields given explicitly override the
 * preset's). `profile` says where the person's id, email and name are: in the userinfo document
 * of a generic OAuth 2.0 provider, by field path (profile.ts), and in the same claims of the ID
 * token when the upstream sends one.
 */
import type { UpstreamAuthMethod } from './client.js';
import type { ProfilePaths } from './profile.js';

export type ProviderKind = 'oauth2' | 'oidc';

export interface Preset {
  kind: ProviderKind;
  issuer: string | null;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  userinfoEndpoint: string | null;
  tokenEndpointAuthMethod: UpstreamAuthMethod;
  scopes: string[];
  authorizeParams: Record<string, string>;
  profile: ProfilePaths;
}

const OIDC_PROFILE: ProfilePaths = { subject: 'sub', email: 'email', emailVerified: 'email_verified', name: 'name' };

export const PRESETS = {
  // Offline access needs access_type=offline; prompt=consent makes Google send a refresh token
  // again when the user reconnects.
  google: {
    kind: 'oauth2',
    issuer: 'https://accounts.google.com',
    authorizationEndpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenEndpoint: 'https://oauth2.googleapis.com/token',
    revocationEndpoint: 'https://oauth2.googleapis.com/revoke',
    userinfoEndpoint: 'https://openidconnect.googleapis.com/v1/userinfo',
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['openid', 'email'],
    authorizeParams: { access_type: 'offline', prompt: 'consent' },
    profile: OIDC_PROFILE,
  },
  // The multi-tenant "common" endpoints; ID tokens there carry the user's tenant as issuer, so
  // the default scopes ask for none (offline_access for a refresh token, Graph's User.Read).
  microsoft: {
    kind: 'oauth2',
    issuer: null,
    authorizationEndpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenEndpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    revocationEndpoint: null,
    userinfoEndpoint: 'https://graph.microsoft.com/oidc/userinfo',
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['offline_access', 'User.Read'],
    authorizeParams: {},
    profile: { subject: 'sub', email: 'email', name: 'name' },
  },
  // GitHub has no RFC 7009 endpoint (its token deletion API is not OAuth); tokens of GitHub Apps
  // with expiring user tokens come with a refresh token. The user's id is a number; a private
  // email reads as null here.
  github: {
    kind: 'oauth2',
    issuer: null,
    authorizationEndpoint: 'https://github.com/login/oauth/authorize',
    tokenEndpoint: 'https://github.com/login/oauth/access_token',
    revocationEndpoint: null,
    userinfoEndpoint: 'https://api.github.com/user',
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['read:user'],
    authorizeParams: {},
    profile: { subject: 'id', email: 'email', name: 'name' },
  },
  // GitLab.com (a self-managed GitLab is an oidc provider with its own issuer).
  gitlab: {
    kind: 'oauth2',
    issuer: 'https://gitlab.com',
    authorizationEndpoint: 'https://gitlab.com/oauth/authorize',
    tokenEndpoint: 'https://gitlab.com/oauth/token',
    revocationEndpoint: 'https://gitlab.com/oauth/revoke',
    userinfoEndpoint: 'https://gitlab.com/oauth/userinfo',
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['openid', 'email'],
    authorizeParams: {},
    profile: OIDC_PROFILE,
  },
  // Sign in with Apple: the client secret is a JWT the operator signs with their Apple key; no
  // userinfo endpoint (the ID token says who); asking for name or email needs form_post, so the
  // default scopes ask for neither.
  apple: {
    kind: 'oauth2',
    issuer: 'https://appleid.apple.com',
    authorizationEndpoint: 'https://appleid.apple.com/auth/authorize',
    tokenEndpoint: 'https://appleid.apple.com/auth/token',
    revocationEndpoint: 'https://appleid.apple.com/auth/revoke',
    userinfoEndpoint: null,
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: ['openid'],
    authorizeParams: {},
    profile: OIDC_PROFILE,
  },
  // Slack's v2 endpoints; refresh tokens come when token rotation is enabled for the app. The
  // person is read from users.identity (identity.basic and identity.email user scopes).
  slack: {
    kind: 'oauth2',
    issuer: null,
    authorizationEndpoint: 'https://slack.com/oauth/v2/authorize',
    tokenEndpoint: 'https://slack.com/api/oauth.v2.access',
    revocationEndpoint: null,
    userinfoEndpoint: 'https://slack.com/api/users.identity',
    tokenEndpointAuthMethod: 'client_secret_post',
    scopes: [],
    authorizeParams: {},
    profile: { subject: 'user.id', email: 'user.email', name: 'user.name' },
  },
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];
