/**
 * Social sign-in presets (docs/social.md): the endpoints, scopes and profile fields of
 * well-known providers, so an operator gives a preset, a client id and a secret. These are the
 * sign-in settings (OpenID Connect where the provider offers it, with a fixed issuer and keys);
 * the vault's presets (src/upstream/presets.ts) are the API-access ones.
 */
import type { SocialConfig, SocialKind } from '../storage/repos/social.js';

export interface SocialPreset {
  kind: SocialKind;
  /** The button's label when the connection is given no name. */
  label: string;
  scopes: string[];
  config: SocialConfig;
}

const OIDC_PROFILE = { subject: 'sub', email: 'email', emailVerified: 'email_verified', name: 'name', picture: 'picture' };

function oidc(
  label: string,
  issuer: string,
  endpoints: { authorize: string; token: string; userinfo: string | null; jwks: string },
  scopes: string[],
  authorizeParams: Record<string, string> = {},
): SocialPreset {
  return {
    kind: 'oidc',
    label,
    scopes,
    config: {
      issuer,
      authorizationEndpoint: endpoints.authorize,
      tokenEndpoint: endpoints.token,
      userinfoEndpoint: endpoints.userinfo,
      jwksUri: endpoints.jwks,
      emailsEndpoint: null,
      tokenAuthMethod: 'client_secret_post',
      issParameterSupported: false,
      idTokenAlgs: ['RS256', 'ES256'],
      pkce: true,
      profile: OIDC_PROFILE,
      authorizeParams,
    },
  };
}

function oauth2(
  label: string,
  endpoints: { authorize: string; token: string; userinfo: string; emails: string | null },
  scopes: string[],
  profile: SocialConfig['profile'],
): SocialPreset {
  return {
    kind: 'oauth2',
    label,
    scopes,
    config: {
      issuer: null,
      authorizationEndpoint: endpoints.authorize,
      tokenEndpoint: endpoints.token,
      userinfoEndpoint: endpoints.userinfo,
      jwksUri: null,
      emailsEndpoint: endpoints.emails,
      tokenAuthMethod: 'client_secret_post',
      issParameterSupported: false,
      idTokenAlgs: [],
      pkce: true,
      profile,
      authorizeParams: {},
    },
  };
}

export const SOCIAL_PRESETS = {
  google: oidc(
    'Google',
    'https://accounts.google.com',
    {
      authorize: 'https://accounts.google.com/o/oauth2/v2/auth',
      token: 'https://oauth2.googleapis.com/token',
      userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
      jwks: 'https://www.googleapis.com/oauth2/v3/certs',
    },
    ['openid', 'email', 'profile'],
  ),
  // The multi-tenant "common" endpoints put each user's own tenant in the ID token's issuer, so
  // sign-in reads Microsoft Graph's /me over plain OAuth 2.0. Graph's `mail` is whatever the
  // directory holds, not an address Microsoft verified: it is never trusted for linking.
  microsoft: oauth2(
    'Microsoft',
    {
      authorize: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      token: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      userinfo: 'https://graph.microsoft.com/v1.0/me',
      emails: null,
    },
    ['User.Read'],
    { subject: 'id', email: 'mail', name: 'displayName' },
  ),
  // No ID token; the id is a number; the addresses and whether GitHub verified them come from /user/emails.
  github: oauth2(
    'GitHub',
    {
      authorize: 'https://github.com/login/oauth/authorize',
      token: 'https://github.com/login/oauth/access_token',
      userinfo: 'https://api.github.com/user',
      emails: 'https://api.github.com/user/emails',
    },
    ['read:user', 'user:email'],
    { subject: 'id', name: 'name', picture: 'avatar_url' },
  ),
  gitlab: oidc(
    'GitLab',
    'https://gitlab.com',
    {
      authorize: 'https://gitlab.com/oauth/authorize',
      token: 'https://gitlab.com/oauth/token',
      userinfo: 'https://gitlab.com/oauth/userinfo',
      jwks: 'https://gitlab.com/oauth/discovery/keys',
    },
    ['openid', 'email', 'profile'],
  ),
  // Apple answers the name and email scopes only by form_post (src/social/apple.ts): the ID token
  // says who (`sub`, `email`, `email_verified`), the first answer's `user` field the name. The
  // client secret is a JWT signed with the connection's Apple key (`apple`).
  apple: oidc(
    'Apple',
    'https://appleid.apple.com',
    {
      authorize: 'https://appleid.apple.com/auth/authorize',
      token: 'https://appleid.apple.com/auth/token',
      userinfo: null,
      jwks: 'https://appleid.apple.com/auth/keys',
    },
    ['openid', 'name', 'email'],
    { response_mode: 'form_post' },
  ),
  // Sign in with Slack (OpenID Connect).
  slack: oidc(
    'Slack',
    'https://slack.com',
    {
      authorize: 'https://slack.com/openid/connect/authorize',
      token: 'https://slack.com/api/openid.connect.token',
      userinfo: 'https://slack.com/api/openid.connect.userInfo',
      jwks: 'https://slack.com/openid/connect/keys',
    },
    ['openid', 'email', 'profile'],
  ),
  // Sign In with LinkedIn using OpenID Connect.
  linkedin: oidc(
    'LinkedIn',
    'https://www.linkedin.com/oauth',
    {
      authorize: 'https://www.linkedin.com/oauth/v2/authorization',
      token: 'https://www.linkedin.com/oauth/v2/accessToken',
      userinfo: 'https://api.linkedin.com/v2/userinfo',
      jwks: 'https://www.linkedin.com/oauth/openid/jwks',
    },
    ['openid', 'email', 'profile'],
  ),
} as const satisfies Record<string, SocialPreset>;

export type SocialPresetName = keyof typeof SOCIAL_PRESETS;
export const SOCIAL_PRESET_NAMES = Object.keys(SOCIAL_PRESETS) as SocialPresetName[];
