/**
 * A SAML 2.0 identity provider for the tests, on samlify, with a signing key and a self-signed
 * certificate made per run (selfsigned). It reads our AuthnRequest (HTTP-Redirect), answers with
 * a Response for the HTTP-POST binding, and can be told to answer wrongly (another audience or
 * recipient, no signature, an injected unsigned assertion) to show each check refuses.
 *
 * samlify is loaded through require: its type declarations pull in the DOM library (through
 * @xmldom/xmldom), which would change global types for the whole typecheck.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import { generate } from 'selfsigned';

interface SamlifyEntity {
  getMetadata(): string;
}
interface SamlifyIdp extends SamlifyEntity {
  parseLoginRequest(
    sp: SamlifyEntity,
    binding: string,
    req: { query: Record<string, string>; octetString?: string },
  ): Promise<{ extract: { request: { id: string } } }>;
  createLoginResponse(
    sp: SamlifyEntity,
    requestInfo: unknown,
    binding: string,
    user: Record<string, string>,
    customTagReplacement: (template: string) => { id: string; context: string },
  ): Promise<{ id: string; context: string }>;
}
interface Samlify {
  IdentityProvider(settings: Record<string, unknown>): SamlifyIdp;
  ServiceProvider(settings: Record<string, unknown>): SamlifyEntity;
  SamlLib: { replaceTagsByValue(template: string, values: Record<string, string>): string };
  setSchemaValidator(v: { validate: (xml: string) => Promise<unknown> }): void;
}

const samlify = createRequire(import.meta.url)('samlify') as Samlify;
// Schema validation of what the IdP receives (our AuthnRequest) is not what these tests check.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

export interface SamlUser {
  email: string;
  name?: string;
  groups?: string[];
  /** The NameID (default: the email). */
  nameId?: string;
  /** More attributes, each with one value. */
  attributes?: Record<string, string>;
  /** The AuthnStatement's AuthnContextClassRef (default PasswordProtectedTransport). */
  authnContext?: string;
}

/** Template values to override (samlify's login response template tags). */
export type ResponseTweaks = Partial<
  Record<
    | 'NameIDFormat'
    | 'Audience'
    | 'SubjectRecipient'
    | 'Destination'
    | 'InResponseTo'
    | 'SubjectInResponseTo'
    | 'Issuer'
    | 'ConditionsNotOnOrAfter'
    | 'SubjectConfirmationDataNotOnOrAfter',
    string
  >
>;

export interface TestIdp {
  entityId: string;
  ssoUrl: string;
  metadataXml: string;
  /** The ID of the AuthnRequest in an HTTP-Redirect URL sent to this IdP. */
  requestId(redirect: URL, spMetadataXml: string): Promise<string>;
  /** A base64 SAMLResponse (HTTP-POST) answering `requestId`, signed as the SP metadata asks. */
  respond(spMetadataXml: string, requestId: string, user: SamlUser, tweaks?: ResponseTweaks): Promise<string>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function attributeStatement(user: SamlUser): string {
  const attr = (name: string, values: string[]) =>
    `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values.map((v) => `<saml:AttributeValue xsi:type="xs:string">${esc(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`;
  const extra = Object.entries(user.attributes ?? {})
    .map(([k, v]) => attr(k, [v]))
    .join('');
  return `<saml:AttributeStatement>${attr('email', [user.email])}${user.name ? attr('name', [user.name]) : ''}${user.groups ? attr('groups', user.groups) : ''}${extra}</saml:AttributeStatement>`;
}

export async function startTestIdp(entityId = `https://idp-${randomUUID().slice(0, 8)}.saml.test/metadata`): Promise<TestIdp> {
  const pems = await generate([{ name: 'commonName', value: 'Keyhall test IdP' }], {
    keySize: 2048,
    notAfterDate: new Date(Date.now() + 30 * 86_400_000),
    algorithm: 'sha256',
  });
  const ssoUrl = new URL('/sso', entityId).href;
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    privateKey: pems.private,
    signingCert: pems.cert,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }],
  });
  const spOf = (spMetadataXml: string) => samlify.ServiceProvider({ metadata: spMetadataXml });
  return {
    entityId,
    ssoUrl,
    metadataXml: idp.getMetadata(),
    async requestId(redirect, spMetadataXml) {
      const parsed = await idp.parseLoginRequest(spOf(spMetadataXml), 'redirect', { query: Object.fromEntries(redirect.searchParams) });
      const id = parsed.extract.request.id;
      // The same ID as in the raw request (samlify read what we sent).
      const raw = inflateRawSync(Buffer.from(redirect.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
      if (!raw.includes(`ID="${id}"`)) throw new Error('samlify read another request ID');
      return id;
    },
    async respond(spMetadataXml, requestId, user, tweaks = {}) {
      const sp = spOf(spMetadataXml);
      const spMeta = (spMetadataXml.match(/entityID="([^"]+)"/) ?? [])[1]!;
      const acs = (spMetadataXml.match(/AssertionConsumerService[^>]*Location="([^"]+)"/) ?? [])[1]!;
      const now = new Date();
      const later = new Date(now.getTime() + 5 * 60_000).toISOString();
      const values: Record<string, string> = {
        ID: `_${randomUUID()}`,
        AssertionID: `_${randomUUID()}`,
        Destination: tweaks.Destination ?? acs,
        Audience: tweaks.Audience ?? spMeta,
        EntityID: spMeta,
        SubjectRecipient: tweaks.SubjectRecipient ?? acs,
        Issuer: tweaks.Issuer ?? entityId,
        IssueInstant: now.toISOString(),
        AssertionConsumerServiceURL: acs,
        StatusCode: SUCCESS,
        ConditionsNotBefore: now.toISOString(),
        ConditionsNotOnOrAfter: tweaks.ConditionsNotOnOrAfter ?? later,
        SubjectConfirmationDataNotOnOrAfter: tweaks.SubjectConfirmationDataNotOnOrAfter ?? later,
        NameIDFormat: tweaks.NameIDFormat ?? EMAIL_FORMAT,
        NameID: user.nameId ?? user.email,
        InResponseTo: tweaks.InResponseTo ?? requestId,
        AuthnStatement: '{AuthnStatementXml}',
        AttributeStatement: '{AttributeStatementXml}',
      };
      // samlify escapes every tag value: the two statements (XML) are put in afterwards.
      const statements = {
        AuthnStatementXml: `<saml:AuthnStatement AuthnInstant="${now.toISOString()}"><saml:AuthnContext><saml:AuthnContextClassRef>${esc(user.authnContext ?? 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport')}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
        AttributeStatementXml: attributeStatement(user),
      };
      const replace = (template: string) => {
        let context = samlify.SamlLib.replaceTagsByValue(template, values)
          .replace('{AuthnStatementXml}', statements.AuthnStatementXml)
          .replace('{AttributeStatementXml}', statements.AttributeStatementXml);
        // The template uses one InResponseTo tag for the Response and its SubjectConfirmationData.
        if (tweaks.SubjectInResponseTo)
          context = context.replace(/(<saml:SubjectConfirmationData [^>]*InResponseTo=")[^"]*"/, `$1${tweaks.SubjectInResponseTo}"`);
        return { id: values.ID!, context };
      };
      const r = await idp.createLoginResponse(sp, { extract: { request: { id: requestId } } }, 'post', { email: user.email }, replace);
      return r.context;
    },
  };
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
const encode = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');

/** The response with every XML signature removed. */
export const unsigned = (samlResponse: string) => encode(decode(samlResponse).replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, ''));

/** The signed assertion (with its signature) from a response. */
const assertionOf = (xml: string) => xml.match(/<saml:Assertion[\s\S]*<\/saml:Assertion>/)![0];

/** An unsigned copy of the response's assertion for another person (a new ID, `email` in NameID and attribute). */
function forgedAssertion(xml: string, email: string): string {
  const original = assertionOf(xml);
  const [, realEmail] = original.match(/<saml:NameID[^>]*>([^<]+)<\/saml:NameID>/)!;
  return original
    .replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '')
    .replace(/ ID="[^"]+"/, ` ID="_${randomUUID()}"`)
    .split(realEmail!)
    .join(email);
}

/**
 * Signature wrapping, as an attacker holding one genuine signed response would try it:
 * - `second`: a second, unsigned assertion for `email` put before the signed one;
 * - `moved`: the signed assertion moved into the Response's Extensions (where a careless
 *   verifier still finds its signature valid) and an unsigned one for `email` in its place.
 */
export function wrapped(samlResponse: string, email: string, how: 'second' | 'moved'): string {
  const xml = decode(samlResponse);
  const signed = assertionOf(xml);
  const forged = forgedAssertion(xml, email);
  if (how === 'second') return encode(xml.replace('<saml:Assertion', `${forged}<saml:Assertion`));
  return encode(xml.replace(signed, forged).replace('<samlp:Status>', `<samlp:Extensions>${signed}</samlp:Extensions><samlp:Status>`));
}

/** The response with a DOCTYPE (an external entity) added. */
export const withDoctype = (samlResponse: string) =>
  encode(decode(samlResponse).replace('<samlp:Response', '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><samlp:Response'));
