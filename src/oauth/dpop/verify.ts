/** DPoP proof verification (RFC 9449 §4.3): one check per function. */
import { createHash } from 'node:crypto';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  errors as joseErrors,
  importJWK,
  type JWK,
  jwtVerify,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose';
import { isPublicJwk } from '../jwk.js';
import type { ReplayCache } from '../types.js';
import type { DpopNonces } from './nonce.js';

/** Algorithms accepted for DPoP proofs (asymmetric only). */
export const DPOP_ALGS = ['EdDSA', 'Ed25519', 'ES256', 'PS256'] as const;
/** How far a proof's `iat` may be from the server's clock. */
export const DPOP_IAT_WINDOW_S = 60;

/** A failed check; callers turn it into the right error for their endpoint (400 or 401). */
export class DpopError extends Error {}

/** The proof lacks a current server nonce; `nonce` is the one to use. */
export class DpopNonceError extends Error {
  constructor(readonly nonce: string) {
    super('a fresh DPoP nonce is required');
  }
}

export interface DpopExpectation {
  method: string;
  /** The endpoint URL (scheme, host, path) the proof must name. */
  url: string;
  /** The access token presented with the proof (resource servers): `ath` must match. */
  accessToken?: string;
  tenantId: string;
  now: number;
  /** When set, the proof must carry a current server nonce. */
  nonces?: DpopNonces | undefined;
}

export interface VerifiedDpop {
  jkt: string;
  jti: string;
}

/** Exactly one DPoP header holding a compact JWS. */
export function singleProof(values: string | string[] | undefined): string | undefined {
  const list = values === undefined ? [] : Array.isArray(values) ? values : [values];
  if (list.length === 0) return undefined;
  if (list.length > 1 || list[0]!.includes(',')) throw new DpopError('more than one DPoP header');
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(list[0]!)) throw new DpopError('the DPoP proof is not a JWT');
  return list[0];
}

function readHeader(proof: string): ProtectedHeaderParameters {
  try {
    return decodeProtectedHeader(proof);
  } catch {
    throw new DpopError('the DPoP proof header is malformed');
  }
}

function checkType(h: ProtectedHeaderParameters): void {
  if (h.typ !== 'dpop+jwt') throw new DpopError('typ must be dpop+jwt');
}

function checkAlgorithm(h: ProtectedHeaderParameters): void {
  if (!(DPOP_ALGS as readonly string[]).includes(h.alg ?? '')) throw new DpopError('unsupported DPoP alg');
}

function checkPublicJwk(h: ProtectedHeaderParameters): JWK {
  const jwk = h.jwk;
  if (!jwk || typeof jwk !== 'object') throw new DpopError('the DPoP proof has no jwk');
  if (!isPublicJwk(jwk)) throw new DpopError('the DPoP jwk must be a public key');
  return jwk;
}

async function checkSignature(proof: string, jwk: JWK, alg: string, now: number): Promise<JWTPayload> {
  try {
    const key = await importJWK({ ...jwk, alg: undefined }, alg);
    const { payload } = await jwtVerify(proof, key, { typ: 'dpop+jwt', algorithms: [alg], currentDate: new Date(now) });
    return payload;
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) throw new DpopError('the DPoP proof signature is invalid');
    throw err;
  }
}

function checkRequiredClaims(p: JWTPayload): void {
  for (const claim of ['jti', 'htm', 'htu'] as const) {
    if (typeof p[claim] !== 'string' || (p[claim] as string).length === 0) throw new DpopError(`the DPoP proof has no ${claim}`);
  }
  if (typeof p.iat !== 'number') throw new DpopError('the DPoP proof has no iat');
  if ((p.jti as string).length > 256) throw new DpopError('the DPoP jti is too long');
}

function checkMethod(p: JWTPayload, method: string): void {
  if (p.htm !== method) throw new DpopError('htm does not match the request method');
}

/** `htu` names this endpoint; query and fragment are ignored (RFC 9449 §4.3 step 9). */
function checkUrl(p: JWTPayload, url: string): void {
  let htu: URL;
  try {
    htu = new URL(p.htu as string);
  } catch {
    throw new DpopError('htu is not a URL');
  }
  const expected = new URL(url);
  if (htu.origin !== expected.origin || htu.pathname !== expected.pathname) throw new DpopError('htu does not match the request URL');
}

function checkFreshness(p: JWTPayload, now: number): void {
  if (Math.abs((p.iat as number) - now / 1000) > DPOP_IAT_WINDOW_S) throw new DpopError('the DPoP proof iat is outside the accepted window');
}

function checkAccessTokenHash(p: JWTPayload, accessToken: string | undefined): void {
  if (accessToken === undefined) return;
  const ath = createHash('sha256').update(accessToken).digest('base64url');
  if (p.ath !== ath) throw new DpopError('ath does not match the access token');
}

async function checkNonce(p: JWTPayload, e: DpopExpectation): Promise<void> {
  if (!e.nonces) return;
  if (!(await e.nonces.isValid(e.tenantId, p.nonce, e.now))) throw new DpopNonceError(await e.nonces.issue(e.tenantId, e.now));
}

async function consumeJti(replay: ReplayCache, e: DpopExpectation, jkt: string, jti: string): Promise<void> {
  const expiresAt = e.now + 2 * DPOP_IAT_WINDOW_S * 1000;
  if (!(await replay.use(e.tenantId, `dpop:${jkt}:${jti}`, expiresAt, e.now))) throw new DpopError('the DPoP proof was already used');
}

/** Verifies one proof; returns the key thumbprint the token is (or must be) bound to. */
export async function verifyDpopProof(proof: string, e: DpopExpectation, replay: ReplayCache): Promise<VerifiedDpop> {
  const h = readHeader(proof);
  checkType(h);
  checkAlgorithm(h);
  const jwk = checkPublicJwk(h);
  const payload = await checkSignature(proof, jwk, h.alg as string, e.now);
  checkRequiredClaims(payload);
  checkMethod(payload, e.method);
  checkUrl(payload, e.url);
  checkFreshness(payload, e.now);
  checkAccessTokenHash(payload, e.accessToken);
  await checkNonce(payload, e);
  const jkt = await calculateJwkThumbprint(jwk);
  await consumeJti(replay, e, jkt, payload.jti as string);
  return { jkt, jti: payload.jti as string };
}
