/**
 * The OID4VCI 1.0 credential issuer, framework-free: the issuer metadata, the proof check (with
 * @openid4vc/openid4vci), the dc+sd-jwt credential (with @sd-jwt/sd-jwt-vc) and the Token Status
 * List token (with @sd-jwt/jwt-status-list). The service (service.ts) holds the state.
 */
import { createHash, KeyObject, randomBytes, sign } from 'node:crypto';
import type { CredentialIssuerMetadata, Openid4vciIssuer } from '@openid4vc/openid4vci';
import type { JwtSigner, VerifyJwtCallback } from '@openid4vc/oauth2';
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { compactVerify, importJWK, type JWK } from 'jose';
import type { ActiveKey } from '../kernel/crypto/keystore.js';
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

/** Verifies a holder's signature with the key its header names (jwk, or a did:key / did:jwk kid). */
const verifyHolderJwt: VerifyJwtCallback = async (signer: JwtSigner, jwt) => {
  if (!(PROOF_ALGS as readonly string[]).includes(signer.alg)) return { verified: false };
  let jwk: JWK;
  if (signer.method === 'jwk') jwk = publicJwk(signer.publicJwk as JWK);
  else if (signer.method === 'did') jwk = resolveHolderDid(signer.didUrl);
  else return { verified: false };
  try {
    await compactVerify(jwt.compact, await importJWK(jwk, signer.alg), { algorithms: [...PROOF_ALGS] });
    return { verified: true, signerJwk: jwk as never };
  } catch {
    return { verified: false };
  }
};

// The OID4VCI and SD-JWT libraries are loaded on first use: together they cost a few hundred
// milliseconds of start-up, paid by every server start and CLI command otherwise.
let openid4vci: Promise<{ issuer: Openid4vciIssuer; v1: Openid4vciVersion }> | undefined;
type Openid4vciVersion = typeof import('@openid4vc/openid4vci').Openid4vciVersion.V1;
function library() {
  openid4vci ??= import('@openid4vc/openid4vci').then((m) => ({
    v1: m.Openid4vciVersion.V1,
    issuer: new m.Openid4vciIssuer({
      callbacks: {
        verifyJwt: verifyHolderJwt,
        hash: (data, alg) => createHash(alg.replace('-', '').toLowerCase()).update(data).digest(),
        generateRandom: (n) => randomBytes(n),
        // The issuer never signs through the library, nor authenticates clients with it.
        signJwt: () => {
          throw new Error('not used');
        },
        clientAuthentication: () => undefined,
      },
    }),
  }));
  return openid4vci;
}

export interface VerifiedProof {
  /** The holder's public key (the credential's cnf.jwk). */
  jwk: JWK;
  /** The holder's DID: the proof's did:key / did:jwk, or the did:jwk of its jwk. */
  did: string;
  nonce: string | undefined;
}

/** Checks one `openid4vci-proof+jwt`: typ, alg, signature by the named key, aud = the issuer, times. */
export async function verifyProof(jwt: string, metadata: CredentialIssuerMetadata, now: number, maxAgeSeconds: number): Promise<VerifiedProof> {
  let verified: Awaited<ReturnType<Openid4vciIssuer['verifyCredentialRequestJwtProof']>>;
  const { issuer, v1 } = await library();
  try {
    verified = await issuer.verifyCredentialRequestJwtProof({
      issuerMetadata: { originalDraftVersion: v1, credentialIssuer: metadata, authorizationServers: [], knownCredentialConfigurations: issuer.getKnownCredentialConfigurationsSupported(metadata) },
      jwt,
      now: new Date(now),
    });
  } catch (err) {
    const reason = err instanceof DidError ? err.message : err instanceof Error ? err.message : 'invalid proof';
    throw new ProofError('invalid_proof', reason);
  }
  const { header, payload, signer } = verified;
  const iat = typeof payload.iat === 'number' ? payload.iat : undefined;
  const nowS = Math.floor(now / 1000);
  if (iat === undefined) throw new ProofError('invalid_proof', 'the proof has no iat');
  if (iat > nowS + 5 || iat < nowS - maxAgeSeconds) throw new ProofError('invalid_proof', 'the proof iat is not recent');
  const jwk = publicJwk(signer.publicJwk as JWK);
  const did = signer.method === 'did' ? didOf(signer.didUrl) : didJwkOf(jwk);
  if (header.key_attestation) throw new ProofError('invalid_proof', 'key attestations are not supported');
  return { jwk, did, nonce: typeof payload.nonce === 'string' ? payload.nonce : undefined };
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
export async function statusListToken(input: { issuer: string; uri: string; size: number; revoked: number[]; iat: number; exp: number; ttl: number }, key: ActiveKey): Promise<string> {
  const { createHeaderAndPayload, StatusList } = await import('@sd-jwt/jwt-status-list');
  const list = new StatusList(new Array<number>(input.size).fill(0), 1);
  for (const idx of input.revoked) list.setStatus(idx, 1);
  const claims = { iss: input.issuer, sub: input.uri, iat: input.iat, exp: input.exp, ttl: input.ttl };
  const { header, payload } = createHeaderAndPayload(list, claims, { alg: 'EdDSA', typ: 'statuslist+jwt', kid: key.kid });
  return signJwt({ alg: 'EdDSA', typ: header.typ, kid: key.kid }, payload, key.privateKey);
}
