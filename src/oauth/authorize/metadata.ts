/** Discovery members for sign-in (RFC 8414, RFC 9126 §5, RFC 9207 §3, OIDC Discovery §3, RP-Initiated Logout §2.1, Back-Channel Logout §2.1). */
import { ACR_VALUES } from './acr.js';
import { ID_TOKEN_ALGS } from '../id-token/sign.js';
import { USERINFO_CLAIMS } from '../userinfo/claims.js';
import { OIDC_SCOPES, PROMPT_VALUES } from './validate.js';
import { REQUEST_OBJECT_ALGS } from './request-object.js';
import { LOCALES } from '../../screens/i18n/locales.js';

export function signinMetadata(issuer: string): Record<string, unknown> {
  return {
    authorization_endpoint: `${issuer}/authorize`,
    pushed_authorization_request_endpoint: `${issuer}/par`,
    require_pushed_authorization_requests: false,
    userinfo_endpoint: `${issuer}/userinfo`,
    end_session_endpoint: `${issuer}/logout`,
    // OpenID Connect Back-Channel Logout 1.0 §2.1: logout tokens carry `sid` (ID tokens do too).
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...OIDC_SCOPES],
    claims_supported: ['iss', 'aud', 'exp', 'iat', ...USERINFO_CLAIMS, 'at_hash', 'amr', 'acr', 'sid', 'idp'],
    acr_values_supported: [...ACR_VALUES],
    id_token_signing_alg_values_supported: [...ID_TOKEN_ALGS],
    prompt_values_supported: [...PROMPT_VALUES],
    // The hosted pages' languages; `ui_locales` picks one (then Accept-Language, then the tenant's default).
    ui_locales_supported: [...LOCALES],
    authorization_response_iss_parameter_supported: true,
    // RFC 9101: signed request objects (`request`) at /authorize and /par; `request_uri` only from /par.
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: [...REQUEST_OBJECT_ALGS],
    // Per client (`require_signed_request_object` in its registration); not for every client.
    require_signed_request_object: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
  };
}
