import { createHash } from 'node:crypto';
import { type CryptoKey, exportJWK, type GenerateKeyPairResult, generateKeyPair, type JWK, SignJWT } from 'jose';

export interface ProofKey {
  pair: GenerateKeyPairResult;
  jwk: JWK;
}

export async function proofKey(): Promise<ProofKey> {
  const pair = await generateKeyPair('ES256', { extractable: true });
  return { pair, jwk: await exportJWK(pair.publicKey) };
}

export const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A DPoP proof with overridable claims (undefined removes one) and header members. */
export async function makeProof(key: ProofKey, claims: Record<string, unknown>, header: Record<string, unknown> = {}, signWith?: CryptoKey): Promise<string> {
  const base = { jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims };
  const payload = Object.fromEntries(Object.entries(base).filter(([, v]) => v !== undefined));
  return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, ...header } as never).sign(signWith ?? key.pair.privateKey);
}

/** An unsigned (`alg: none`) or arbitrarily-signed compact JWT. */
export function rawJwt(header: object, payload: object, signature = ''): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc(header)}.${enc(payload)}.${signature}`;
}
