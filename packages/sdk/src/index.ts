export {
  KeyhallClient,
  type KeyhallClientOptions,
  type ListItem,
  type ListPaths,
  type Method,
  type Operation,
  type PathsWith,
  type RequestBody,
  type RequestOptions,
  type ResponseBody,
  retryAfterMs,
  type components,
  type operations,
  type paths,
} from './client.js';
export { KeyhallError } from './errors.js';
export {
  type AccessTokenAlgorithm,
  type AccessTokenClaims,
  AccessTokenError,
  type DpopRequest,
  parseAuthorization,
  verifyAccessToken,
  type VerifyAccessTokenOptions,
} from './tokens.js';
export {
  type HeaderSource,
  type VerifiedWebhook,
  verifyWebhook,
  type VerifyWebhookOptions,
  type WebhookEvent,
  WebhookVerificationError,
  type WebhookFailure,
} from './webhooks.js';
