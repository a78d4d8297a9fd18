/**
 * Holder keys and their DIDs: did:jwk (any public JWK) and did:key for Ed25519 (multicodec
 * 0xed) and P-256 (0x1200, compressed point). A proof may name its key by `jwk`, or by a
 * did:key / did:jwk URL in `kid`; the credential's subject is that DID, or the did:jwk of a
 * bare `jwk`.
 */
import { ECDH } from 'node:crypto';
import { base58 } from '@scure/base';
import type { JWK } from 'jose';
import { isPublicJwk } from '../oauth/jwk.js';

export class DidError extends Error {}

const ED25519 = [0xed, 0x01];
const P256 = [0x80, 0x24];

/** The public members of a JWK (never `d` or the other private parts). */
export function publicJwk(jwk: JWK): JWK {
  if (jwk.kty === 'OKP') return { kty: 'OKP', crv: jwk.crv!, x: jwk.x! };
  if (jwk.kty === 'EC') return { kty: 'EC', crv: jwk.crv!, x: jwk.x!, y: jwk.y! };
  if (jwk.kty === 'RSA') return { kty: 'RSA', n: jwk.n!, e: jwk.e! };
  throw new DidError(`unsupported key type ${String(jwk.kty)}`);
}

/** did:jwk of a public key (the JWK's public members, base64url JSON). */
export function didJwkOf(jwk: JWK): string {
  return `did:jwk:${Buffer.from(JSON.stringify(publicJwk(jwk))).toString('base64url')}`;
}

/** The DID without its fragment (`did:key:z…#z…` → `did:key:z…`). */
export const didOf = (didUrl: string) => didUrl.split('#')[0]!;

function fromDidJwk(did: string): JWK {
  try {
    const value: unknown = JSON.parse(Buffer.from(did.slice('did:jwk:'.length), 'base64url').toString('utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DidError('did:jwk is not a JWK');
    const jwk = value as JWK;
    if (!isPublicJwk(jwk)) throw new DidError('did:jwk names a private or symmetric key');
    return publicJwk(jwk);
  } catch (err) {
    if (err instanceof DidError) throw err;
    throw new DidError('malformed did:jwk');
  }
}

function fromDidKey(did: string): JWK {
  const id = did.slice('did:key:'.length);
  if (!id.startsWith('z')) throw new DidError('did:key must be base58btc (z…)');
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(id.slice(1));
  } catch {
    throw new DidError('malformed did:key');
  }
  const codec = [bytes[0], bytes[1]];
  const key = Buffer.from(bytes.subarray(2));
  if (codec[0] === ED25519[0] && codec[1] === ED25519[1] && key.length === 32) return { kty: 'OKP', crv: 'Ed25519', x: key.toString('base64url') };
  if (codec[0] === P256[0] && codec[1] === P256[1] && key.length === 33) {
    let point: Buffer;
    try {
      point = ECDH.convertKey(key, 'prime256v1', undefined, undefined, 'uncompressed') as Buffer;
    } catch {
      throw new DidError('did:key: not a P-256 point');
    }
    return { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') };
  }
  throw new DidError('did:key: only Ed25519 and P-256 keys are supported');
}

/** The public key a did:jwk or did:key URL names. */
export function resolveHolderDid(didUrl: string): JWK {
  const did = didOf(didUrl);
  if (did.startsWith('did:jwk:')) return fromDidJwk(did);
  if (did.startsWith('did:key:')) return fromDidKey(did);
  throw new DidError('only did:key and did:jwk holder keys are supported');
}

/** did:key of an Ed25519 or P-256 public JWK (used by tests and docs examples). */
export function didKeyOf(jwk: JWK): string {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return `did:key:z${base58.encode(Uint8Array.from([...ED25519, ...Buffer.from(jwk.x!, 'base64url')]))}`;
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
    const uncompressed = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    const compressed = ECDH.convertKey(uncompressed, 'prime256v1', undefined, undefined, 'compressed') as Buffer;
    return `did:key:z${base58.encode(Uint8Array.from([...P256, ...compressed]))}`;
  }
  throw new DidError('did:key: only Ed25519 and P-256 keys are supported');
}
