/**
 * The SAML 2.0 service provider of an SSO connection, on @node-saml/node-saml: IdP metadata
 * import (XML or URL through the egress policy), SP metadata, the AuthnRequest (HTTP-Redirect)
 * and the validation of the IdP's HTTP-POST response. node-saml verifies the XML signatures
 * (only what is signed is read), the audience and the InResponseTo binding; the checks it leaves
 * out are made here on the verified assertion: SubjectConfirmationData/@Recipient against our
 * ACS URL, the signed InResponseTo, the issuer, and the time window against the injected clock.
 * Framework-free.
 */
import { X509Certificate } from 'node:crypto';
import { type CacheProvider, type Profile, SAML, SamlStatusError, ValidateInResponseTo } from '@node-saml/node-saml';
import { parseStringPromise, processors } from 'xml2js';
import { checkEgressUrlResolved } from '../egress/url.js';
import { errors } from '../kernel/errors.js';
import type { SamlSettings } from '../storage/repos/sso-connections.js';
import { describe } from './oidc.js';
import { MAX_UPSTREAM_BYTES, type UpstreamHttp, upstreamFetch } from '../upstream/http.js';

/** The largest SAML document read: IdP metadata, or a decoded SAMLResponse. */
export const MAX_SAML_XML_BYTES = MAX_UPSTREAM_BYTES;
/** How far the IdP's clock may be from ours for NotBefore / NotOnOrAfter. */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** An AuthnRequest must be answered within this time. */
export const SAML_REQUEST_TTL_SECONDS = 600;
/** At most this many signing certificates are taken from IdP metadata. */
const MAX_IDP_CERTIFICATES = 10;

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/** A DTD (and so any entity, internal or external) is never accepted in SAML input. */
const hasDtd = (xml: string) => /<!DOCTYPE|<!ENTITY/i.test(xml);

/** An element as xml2js gives it (prefixes stripped): attributes in `$`, text in `_`, children in arrays. */
type XmlNode = { $?: Record<string, string>; _?: string; [child: string]: unknown };

const children = (node: XmlNode | undefined, name: string): XmlNode[] => {
  const v = node?.[name];
  return Array.isArray(v) ? (v as XmlNode[]).filter((n) => typeof n === 'object' && n !== null) : [];
};

/** Every element named `name` in the tree under `root` (the root included). */
function descendants(root: XmlNode, rootName: string, name: string): XmlNode[] {
  const found: XmlNode[] = [];
  const walk = (node: XmlNode, nodeName: string, depth: number) => {
    if (depth > 64) throw new Error('nested too deeply');
    if (nodeName === name) found.push(node);
    for (const [k, v] of Object.entries(node)) {
      if (k === '$' || k === '_' || !Array.isArray(v)) continue;
      for (const child of v) if (typeof child === 'object' && child !== null) walk(child as XmlNode, k, depth + 1);
    }
  };
  walk(root, rootName, 0);
  return found;
}

/** Parses XML strictly (sax in strict mode: any error refuses it); no DTD, so no entities. */
async function parseXml(xml: string): Promise<{ name: string; root: XmlNode }> {
  if (hasDtd(xml)) throw new Error('a DTD or entity declaration is not allowed');
  let doc: Record<string, XmlNode> | null;
  try {
    doc = (await parseStringPromise(xml, { strict: true, explicitArray: true, explicitCharkey: true, tagNameProcessors: [processors.stripPrefix] })) as Record<
      string,
      XmlNode
    > | null;
  } catch (err) {
    throw new Error(
      `not well-formed XML (${String((err as Error).message)
        .split('\n')[0]!
        .slice(0, 120)})`,
    );
  }
  const name = doc ? Object.keys(doc)[0] : undefined;
  if (!doc || !name || typeof doc[name] !== 'object') throw new Error('not an XML document');
  return { name, root: doc[name] };
}

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  certificates: string[];
}

/**
 * Reads what the SP needs from IdP metadata: the one EntityDescriptor with an IDPSSODescriptor,
 * its entityID, its HTTP-Redirect SingleSignOnService and its signing certificates (each must
 * parse as X.509). Errors are 400 `invalid_request` naming `field`.
 */
export async function parseIdpMetadata(xml: string, field: string): Promise<IdpMetadata> {
  if (Buffer.byteLength(xml, 'utf8') > MAX_SAML_XML_BYTES) throw errors.invalidRequest(`${field}: larger than ${MAX_SAML_XML_BYTES} bytes`);
  let entities: XmlNode[];
  try {
    const { name, root } = await parseXml(xml);
    entities = descendants(root, name, 'EntityDescriptor').filter((e) => children(e, 'IDPSSODescriptor').length > 0);
  } catch (err) {
    throw errors.invalidRequest(`${field}: ${(err as Error).message}`);
  }
  if (entities.length !== 1)
    throw errors.invalidRequest(`${field}: must describe exactly one identity provider (an EntityDescriptor with an IDPSSODescriptor)`);
  const entity = entities[0]!;
  const entityId = entity.$?.entityID?.trim() ?? '';
  if (entityId === '' || entityId.length > 1024) throw errors.invalidRequest(`${field}: the EntityDescriptor has no entityID`);
  const idp = children(entity, 'IDPSSODescriptor');
  const ssoUrl = idp
    .flatMap((d) => children(d, 'SingleSignOnService'))
    .find((s) => s.$?.Binding === REDIRECT_BINDING)
    ?.$?.Location?.trim();
  if (!ssoUrl) throw errors.invalidRequest(`${field}: the IdP has no SingleSignOnService for the HTTP-Redirect binding`);
  let parsed: URL;
  try {
    parsed = new URL(ssoUrl);
  } catch {
    throw errors.invalidRequest(`${field}: the SingleSignOnService Location is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw errors.invalidRequest(`${field}: the SingleSignOnService Location must be an http(s) URL`);
  const certNodes = idp
    .flatMap((d) => children(d, 'KeyDescriptor'))
    .filter((k) => k.$?.use === undefined || k.$.use === 'signing')
    .flatMap((k) => children(k, 'KeyInfo'))
    .flatMap((k) => children(k, 'X509Data'))
    .flatMap((k) => children(k, 'X509Certificate'));
  const certificates = [...new Set(certNodes.map((n) => (n._ ?? '').replace(/\s+/g, '')))].filter((c) => c !== '');
  if (certificates.length === 0) throw errors.invalidRequest(`${field}: the IdP lists no signing certificate`);
  if (certificates.length > MAX_IDP_CERTIFICATES) throw errors.invalidRequest(`${field}: more than ${MAX_IDP_CERTIFICATES} signing certificates`);
  for (const c of certificates) {
    try {
      new X509Certificate(Buffer.from(c, 'base64'));
    } catch {
      throw errors.invalidRequest(`${field}: a signing certificate is not a valid X.509 certificate`);
    }
  }
  return { entityId, ssoUrl: parsed.href, certificates };
}

/** Fetches IdP metadata through the egress policy (checked URL, guarded agent, size limit). */
export async function fetchIdpMetadata(url: string, http: UpstreamHttp, field: string): Promise<IdpMetadata> {
  const decision = await checkEgressUrlResolved(url, http.policy, { field, resolver: http.resolver });
  if (!decision.ok) throw decision.error;
  let text: string;
  try {
    const res = await upstreamFetch(http, url, { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    if (res.status !== 200) throw new Error(`the server answered ${res.status}`);
    text = await res.text();
  } catch (err) {
    throw errors.invalidRequest(`${field}: the metadata could not be fetched (${describe(err)})`);
  }
  return await parseIdpMetadata(text, field);
}

/** The certificate as node-saml takes it. */
const pem = (der: string) => `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----`;

/** Where a connection's SP lives. */
export interface SpUrls {
  acsUrl: string;
  entityId: string;
}

function samlOf(settings: SamlSettings, sp: SpUrls, cacheProvider?: CacheProvider): SAML {
  return new SAML({
    callbackUrl: sp.acsUrl,
    entryPoint: settings.idpSsoUrl,
    issuer: sp.entityId,
    audience: sp.entityId,
    idpCert: settings.idpCertificates.map(pem),
    wantAssertionsSigned: !settings.allowSignedResponse,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: SAML_REQUEST_TTL_SECONDS * 1000,
    // node-saml judges times by the system clock; they are checked below with the injected one.
    acceptedClockSkewMs: -1,
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    signatureAlgorithm: 'sha256',
    ...(cacheProvider ? { cacheProvider } : {}),
  });
}

/** The SP metadata document of a connection (no signing or encryption keys: requests are not signed). */
export function spMetadata(settings: SamlSettings, sp: SpUrls): string {
  return samlOf(settings, sp).generateServiceProviderMetadata(null, null);
}

/**
 * The IdP URL carrying a new AuthnRequest (HTTP-Redirect binding). `save` stores its ID (the
 * request the answer must name) before the URL is returned.
 */
export async function authnRequestUrl(settings: SamlSettings, sp: SpUrls, save: (requestId: string) => Promise<void>): Promise<string> {
  const cache: CacheProvider = {
    saveAsync: async (key, value) => {
      await save(key);
      return { value, createdAt: Date.now() };
    },
    getAsync: async () => null,
    removeAsync: async () => null,
  };
  return samlOf(settings, sp, cache).getAuthorizeUrlAsync('', undefined, {});
}

/** Why a SAML response was refused: the `reason` of `sso.login.failed`. */
export type SamlFailure =
  | 'xml_rejected'
  | 'signature_invalid'
  | 'audience_mismatch'
  | 'recipient_mismatch'
  | 'request_unknown'
  | 'assertion_expired'
  | 'assertion_replayed'
  | 'upstream_error'
  | 'invalid_response';

export class SamlResponseError extends Error {
  constructor(
    readonly reason: SamlFailure,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/** What an accepted response says, all of it from the signed assertion. */
export interface SamlAssertion {
  /** The ID of the request answered (live when checked; the caller consumes it). */
  requestId: string;
  /** The assertion's ID and when it may be forgotten (for the replay table). */
  assertionId: string;
  assertionExpiresAt: number;
  nameId: string;
  nameIdFormat: string | null;
  attributes: Record<string, unknown>;
  /** The AuthnContextClassRef of each AuthnStatement: how the IdP authenticated the person. */
  authnContexts: string[];
}

export interface SamlValidation {
  settings: SamlSettings;
  sp: SpUrls;
  /** The base64 SAMLResponse form field. */
  samlResponse: string;
  now: number;
  /** Whether a live (unexpired, unused) request of this connection has that ID. */
  liveRequest: (requestId: string) => Promise<boolean>;
  /** Whether an assertion with that ID was already accepted. */
  assertionSeen: (assertionId: string) => Promise<boolean>;
}

const time = (v: unknown): number | undefined => {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
};

/** The node-saml error, as a reason code. */
function classify(err: unknown): SamlResponseError {
  if (err instanceof SamlResponseError) return err;
  if (err instanceof SamlStatusError) return new SamlResponseError('upstream_error', err.message.slice(0, 200));
  const message = err instanceof Error ? err.message : String(err);
  const detail = message.slice(0, 200);
  if (/InResponseTo/i.test(message)) return new SamlResponseError('request_unknown', detail);
  if (/signature/i.test(message)) return new SamlResponseError('signature_invalid', detail);
  if (/audience/i.test(message)) return new SamlResponseError('audience_mismatch', detail);
  return new SamlResponseError('invalid_response', detail);
}

/**
 * Validates the IdP's HTTP-POST response. In order:
 * 1. size (MAX_SAML_XML_BYTES decoded) and no DTD / entity declaration;
 * 2. a read-only look for an assertion ID already accepted (a replay is refused before it can
 *    burn anything);
 * 3. node-saml: the request named by InResponseTo must be live (sent by this connection,
 *    unexpired, unused — the caller consumes it once every check has passed), the signature is verified with the IdP's certificates — the assertion's own unless the
 *    connection accepts a signed response alone; more than one assertion (signature wrapping)
 *    is refused — and the audience must be our SP entity id;
 * 4. on the verified assertion: the issuer is the IdP's entity id; a bearer
 *    SubjectConfirmationData names our ACS URL as Recipient and the consumed request as
 *    InResponseTo; SubjectConfirmationData and Conditions NotBefore/NotOnOrAfter hold at `now`
 *    (SAML_CLOCK_SKEW_MS either way).
 */
export async function validateSamlResponse(v: SamlValidation): Promise<SamlAssertion> {
  if (v.samlResponse.length > Math.ceil((MAX_SAML_XML_BYTES * 4) / 3) + 4) throw new SamlResponseError('xml_rejected', 'the response is too large');
  const xml = Buffer.from(v.samlResponse, 'base64').toString('utf8');
  if (Buffer.byteLength(xml, 'utf8') > MAX_SAML_XML_BYTES) throw new SamlResponseError('xml_rejected', 'the response is too large');
  let ids: string[];
  try {
    const { name, root } = await parseXml(xml);
    ids = descendants(root, name, 'Assertion').map((a) => a.$?.ID ?? '');
  } catch (err) {
    throw new SamlResponseError('xml_rejected', (err as Error).message);
  }
  for (const id of ids) if (await v.assertionSeen(id)) throw new SamlResponseError('assertion_replayed', 'this assertion was already used');

  // node-saml asks for the request twice (the Response's InResponseTo, then the assertion's):
  // both must be the same live request. Nothing is consumed here: a response that fails a later
  // check leaves the request to the genuine answer; the caller consumes it after every check.
  let consumed: { id: string } | undefined;
  const cache: CacheProvider = {
    saveAsync: async () => null,
    getAsync: async (key) => {
      if (consumed) return consumed.id === key ? new Date().toISOString() : null;
      if (key.length > 200 || !(await v.liveRequest(key))) return null;
      consumed = { id: key };
      // node-saml compares this with the system clock; the expiry was checked with ours.
      return new Date().toISOString();
    },
    removeAsync: async () => null,
  };
  let profile: Profile | null;
  try {
    ({ profile } = await samlOf(v.settings, v.sp, cache).validatePostResponseAsync({ SAMLResponse: v.samlResponse }));
  } catch (err) {
    throw classify(err);
  }
  if (!profile?.getAssertion || !consumed) throw new SamlResponseError('invalid_response', 'no assertion');
  const assertion = (profile.getAssertion() as { Assertion?: XmlNode }).Assertion;
  const assertionId = assertion?.$?.ID;
  if (!assertion || !assertionId) throw new SamlResponseError('invalid_response', 'the assertion has no ID');
  if (profile.issuer !== v.settings.idpEntityId) throw new SamlResponseError('invalid_response', 'the assertion was not issued by the IdP of this connection');

  const skew = SAML_CLOCK_SKEW_MS;
  const bearer = children(children(assertion, 'Subject')[0], 'SubjectConfirmation')
    .filter((sc) => sc.$?.Method === BEARER)
    .flatMap((sc) => children(sc, 'SubjectConfirmationData'))
    .map((d) => d.$ ?? {});
  if (bearer.length === 0) throw new SamlResponseError('invalid_response', 'no bearer SubjectConfirmation');
  const forUs = bearer.filter((d) => d.Recipient === v.sp.acsUrl);
  if (forUs.length === 0) throw new SamlResponseError('recipient_mismatch', 'SubjectConfirmationData Recipient is not this ACS URL');
  const ours = forUs.filter((d) => d.InResponseTo === consumed!.id);
  if (ours.length === 0) throw new SamlResponseError('request_unknown', 'the signed assertion does not answer this request');
  const confirmation = ours.find((d) => {
    const until = time(d.NotOnOrAfter);
    const from = time(d.NotBefore);
    return until !== undefined && v.now < until + skew && (from === undefined || v.now + skew >= from);
  });
  if (!confirmation) throw new SamlResponseError('assertion_expired', 'outside SubjectConfirmationData NotBefore/NotOnOrAfter');
  const conditions = children(assertion, 'Conditions')[0]?.$ ?? {};
  const notBefore = time(conditions.NotBefore);
  const notOnOrAfter = time(conditions.NotOnOrAfter);
  if (notBefore !== undefined && v.now + skew < notBefore) throw new SamlResponseError('assertion_expired', 'Conditions NotBefore is in the future');
  if (notOnOrAfter !== undefined && v.now - skew >= notOnOrAfter) throw new SamlResponseError('assertion_expired', 'Conditions NotOnOrAfter has passed');

  if (!profile.nameID) throw new SamlResponseError('invalid_response', 'the assertion has no NameID');
  const expiries = [time(confirmation.NotOnOrAfter), notOnOrAfter].filter((t): t is number => t !== undefined);
  return {
    requestId: consumed.id,
    assertionId,
    assertionExpiresAt: Math.max(v.now, ...expiries) + skew,
    nameId: profile.nameID,
    nameIdFormat: profile.nameIDFormat ?? null,
    attributes: (profile.attributes as Record<string, unknown> | undefined) ?? {},
    authnContexts: children(assertion, 'AuthnStatement')
      .flatMap((st) => children(st, 'AuthnContext'))
      .flatMap((c) => texts(c, 'AuthnContextClassRef')),
  };
}

/** The trimmed text of each child element named `name` (xml2js gives a text-only element as a string). */
function texts(node: XmlNode, name: string): string[] {
  const v = node[name];
  if (!Array.isArray(v)) return [];
  return v
    .map((n: unknown) => (typeof n === 'string' ? n : (n as XmlNode | null)?._))
    .filter((t): t is string => typeof t === 'string' && t.trim() !== '')
    .map((t) => t.trim());
}

/**
 * AuthnContextClassRef values that state a multi-factor authentication: REFEDS MFA, Microsoft
 * Entra ID's multipleauthn, and the SAML 2.0 classes whose definition requires two factors.
 */
export const SAML_MFA_CONTEXTS: ReadonlySet<string> = new Set([
  'https://refeds.org/profile/mfa',
  'http://schemas.microsoft.com/claims/multipleauthn',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:Smartcard',
  'urn:oasis:names:tc:SAML:2.0:ac:classes:SmartcardPKI',
]);

/** The upstream profile of a SAML assertion (the email falls back to an emailAddress NameID). */
export function samlClaims(
  settings: SamlSettings,
  a: SamlAssertion,
): { subject: string; email: unknown; emailVerified: boolean | undefined; name: unknown; groups: unknown; mfa: boolean } | SamlResponseError {
  if (a.nameIdFormat === TRANSIENT) return new SamlResponseError('invalid_response', 'a transient NameID cannot identify a user');
  const email = a.attributes[settings.attributes.email] ?? (a.nameIdFormat === EMAIL_FORMAT ? a.nameId : undefined);
  const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
  // With an email_verified attribute configured the IdP's statement decides; without one
  // (undefined), the organization's verified domain does (docs/sso.md, "Trust boundaries").
  const attribute = settings.attributes.emailVerified;
  const verified = attribute === undefined ? undefined : String(first(a.attributes[attribute]) ?? '').toLowerCase() === 'true';
  return {
    subject: a.nameId,
    email: first(email),
    emailVerified: verified,
    name: a.attributes[settings.attributes.name],
    groups: a.attributes[settings.attributes.groups],
    mfa: a.authnContexts.some((c) => SAML_MFA_CONTEXTS.has(c)),
  };
}
