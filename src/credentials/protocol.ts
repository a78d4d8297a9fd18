/**
 * The OID4VCI 1.0 credential issuer, framework-free: the issuer metadata, the proof check (with
 * jose), the dc+sd-jwt credential (with @sd-jwt/sd-jwt-vc) and the Token Status
 * List token (with @sd-jwt/jwt-status-list). The service (service.ts) holds the state.
 */
import { KeyObject, randomBytes, sign } from 'node:crypto';
import type { CredentialIssuerMetadata } from '@openid4vc/openid4vci';
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { decodeProtectedHeader, errors as joseErrors, importJWK, type JWK, type JWTPayload, jwtVerify, type ProtectedHeaderParameters } from 'jose';
import type { ActiveKey } from '../kernel/crypto/keystore.js';
import { isPublicJwk } from '../oauth/jwk.js';
import { signJwt } from '../oauth/tokens/jws.js';
import { DidError, didJwkOf, didOf, publicJwk, resolveHolderDid } from './did.js';
import type { ClaimSpec, CredentialTypeRecord } from './types.js';

export const CREDENTIAL_ISSUER_METADATA_PATH = '/.well-known/openid-credential-issuer';
export const JWT_VC_ISSUER_PATH = '/.well-known/jwt-vc-issuer';
export const CREDENTIAL_PATH = '/credentials/credential';
export const NONCE_PATH = '/credentials/nonce';
export const OFFER_PATH = '/credentials/offers';
export const STATUS_LIST_PATH = '/credentials/status';

export const FORMAT = 'dc+sd-jwt';
export const PROOF_TYP = 'openid4vci-proof+jwt';
/** What holders may sign proofs with, and what the issuer advertises for credentials (it signs EdDSA). */
export const PROOF_ALGS = ['EdDSA', 'ES256'] as const;
export const CREDENTIAL_SIGNING_ALGS = ['EdDSA', 'ES256'] as const;
export const BINDING_METHODS = ['jwk', 'did:key', 'did:jwk'] as const;

/** The built-in type every organization may offer to its members. */
export const MEMBERSHIP_TYPE = 'OrganizationMembership';
export const membershipType = (tenantId: string): CredentialTypeRecord => ({
  tenantId,
  id: MEMBERSHIP_TYPE,
  vct: 'urn:keyhall:credential:OrganizationMembership',
  displayName: 'Organization membership',
  claims: {
    organization_id: { type: 'string', mandatory: true, display_name: 'Organization ID' },
    organization_name: { type: 'string', mandatory: true, display_name: 'Organization' },
    role: { type: 'string', mandatory: true, display_name: 'Role' },
    email: { type: 'string', mandatory: true, display_name: 'Email' },
  },
  lifetimeSeconds: 365 * 24 * 3600,
  createdAt: 0,
});

export const randomToken = () => randomBytes(32).toString('base64url');

function configuration(t: CredentialTypeRecord) {
  return {
    format: FORMAT,
    vct: t.vct,
    cryptographic_binding_methods_supported: [...BINDING_METHODS],
    credential_signing_alg_values_supported: [...CREDENTIAL_SIGNING_ALGS],
    proof_types_supported: { jwt: { proof_signing_alg_values_supported: [...PROOF_ALGS] } },
    credential_metadata: {
      display: [{ name: t.displayName }],
      claims: Object.entries(t.claims).map(([name, spec]: [string, ClaimSpec]) => ({
        path: [name],
        mandatory: spec.mandatory,
        ...(spec.display_name ? { display: [{ name: spec.display_name }] } : {}),
      })),
    },
  };
}

/** OID4VCI 1.0 §12.2.4 credential issuer metadata; the issuer is its own authorization server. */
export function credentialIssuerMetadata(issuer: string, displayName: string, types: CredentialTypeRecord[]): CredentialIssuerMetadata {
  return {
    credential_issuer: issuer,
    credential_endpoint: `${issuer}${CREDENTIAL_PATH}`,
    nonce_endpoint: `${issuer}${NONCE_PATH}`,
    display: [{ name: displayName }],
    credential_configurations_supported: Object.fromEntries(types.map((t) => [t.id, configuration(t)])),
  } as CredentialIssuerMetadata;
}

/** SD-JWT VC issuer metadata: the keys that sign this issuer's credentials. */
export const jwtVcIssuerMetadata = (issuer: string, jwks: { keys: JWK[] }) => ({ issuer, jwks });

export class ProofError extends Error {
  constructor(
    readonly code: 'invalid_proof' | 'invalid_nonce',
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedProof {
  /** The holder's public key (the credential's cnf.jwk). */
  jwk: JWK;
  /** The holder's DID: the proof's did:key / did:jwk, or the did:jwk of its jwk. */
  did: string;
  nonce: string | undefined;
}

const refuse = (message: string) => new ProofError('invalid_proof', message);

function proofHeader(jwt: string): ProtectedHeaderParameters {
  try {
    return decodeProtectedHeader(jwt);
  } catch {
    throw refuse('the proof is not a JWT');
  }
}

/**
 * The key a proof header names: a public `jwk`, or a did:key / did:jwk URL in `kid`. A `jwk`
 * with private members is refused: a credential bound to a key its holder has published binds
 * to nobody.
 */
function holderKey(h: ProtectedHeaderParameters): { jwk: JWK; did: string } {
  if (h.jwk !== undefined && h.kid !== undefined) throw refuse('the proof names its key twice (jwk and kid)');
  if (h.jwk !== undefined) {
    if (typeof h.jwk !== 'object' || h.jwk === null || Array.isArray(h.jwk)) throw refuse('the proof jwk is not a JWK');
    if (!isPublicJwk(h.jwk)) throw refuse('the proof jwk must be a public key: it carries private key members');
    const jwk = publicJwk(h.jwk);
    return { jwk, did: didJwkOf(jwk) };
  }
  if (typeof h.kid === 'string' && h.kid.startsWith('did:')) return { jwk: resolveHolderDid(h.kid), did: didOf(h.kid) };
  throw refuse('the proof names no key: a jwk, or a did:key / did:jwk kid');
}

/**
 * Checks one `openid4vci-proof+jwt` (OID4VCI 1.0 Appendix F.1, the jwt proof type) with jose: typ, alg,
 * the key the header names, the signature, `aud` = this issuer exactly (whatever its scheme: an
 * http loopback issuer is as much this issuer as an https one), `exp`/`nbf`, `iat` within the
 * nonce lifetime. The nonce is returned for the caller to consume.
 */
export async function verifyProof(jwt: string, issuer: string, now: number, maxAgeSeconds: number): Promise<VerifiedProof> {
  const header = proofHeader(jwt);
  if (header.typ !== PROOF_TYP) throw refuse(`typ must be ${PROOF_TYP}`);
  const alg = header.alg ?? '';
  if (!(PROOF_ALGS as readonly string[]).includes(alg)) throw refuse(`the proof alg must be one of ${PROOF_ALGS.join(', ')}`);
  if (header.key_attestation !== undefined) throw refuse('key attestations are not supported');
  if (header.trust_chain !== undefined || header.x5c !== undefined) throw refuse('only jwk, did:key and did:jwk holder keys are supported');
  let holder: { jwk: JWK; did: string };
  let payload: JWTPayload;
  try {
    holder = holderKey(header);
    ({ payload } = await jwtVerify(jwt, await importJWK(holder.jwk, alg), { typ: PROOF_TYP, algorithms: [alg], audience: issuer, currentDate: new Date(now) }));
  } catch (err) {
    if (err instanceof ProofError) throw err;
    if (err instanceof DidError || err instanceof joseErrors.JOSEError || err instanceof TypeError) throw refuse(`invalid proof: ${err.message}`);
    throw err;
  }
  const nowS = Math.floor(now / 1000);
  if (typeof payload.iat !== 'number') throw refuse('the proof has no iat');
  if (payload.iat > nowS + 5 || payload.iat < nowS - maxAgeSeconds) throw refuse('the proof iat is not recent');
  return { jwk: holder.jwk, did: holder.did, nonce: typeof payload.nonce === 'string' ? payload.nonce : undefined };
}

/** A compact signature with the tenant's active EdDSA key (the SD-JWT signer). */
function edDsaSigner(key: ActiveKey) {
  const ko = KeyObject.from(key.privateKey as Parameters<typeof KeyObject.from>[0]);
  return (data: string) => sign(null, Buffer.from(data), ko).toString('base64url');
}

export interface CredentialInput {
  issuer: string;
  vct: string;
  claims: Record<string, unknown>;
  holder: JWK;
  status: { idx: number; uri: string };
  iat: number;
  exp: number;
}

/** A dc+sd-jwt whose every claim is selectively disclosable; iss, vct, iat, exp, cnf and status are not. */
export async function issueSdJwtVc(input: CredentialInput, key: ActiveKey): Promise<string> {
  const { SDJwtVcInstance } = await import('@sd-jwt/sd-jwt-vc');
  const sdjwt = new SDJwtVcInstance({ signer: edDsaSigner(key), signAlg: 'EdDSA', hasher: digest, hashAlg: 'sha-256', saltGenerator: generateSalt });
  const payload = {
    iss: input.issuer,
    vct: input.vct,
    iat: input.iat,
    exp: input.exp,
    cnf: { jwk: input.holder },
    status: { status_list: input.status },
    ...input.claims,
  };
  return sdjwt.issue(payload, { _sd: Object.keys(input.claims) } as never, { header: { kid: key.kid, typ: FORMAT } });
}

/** A Token Status List token (1 bit per credential, 1 = revoked), signed EdDSA. */
export async function statusListToken(
  input: { issuer: string; uri: string; size: number; revoked: number[]; iat: number; exp: number; ttl: number },
  key: ActiveKey,
): Promise<string> {
  const { createHeaderAndPayload, StatusList } = await import('@sd-jwt/jwt-status-list');
  const list = new StatusList(new Array<number>(input.size).fill(0), 1);
  for (const idx of input.revoked) list.setStatus(idx, 1);
  const claims = { iss: input.issuer, sub: input.uri, iat: input.iat, exp: input.exp, ttl: input.ttl };
  const { header, payload } = createHeaderAndPayload(list, claims, { alg: 'EdDSA', typ: 'statuslist+jwt', kid: key.kid });
  return signJwt({ alg: 'EdDSA', typ: header.typ, kid: key.kid }, payload, key.privateKey);
}
