/**
 * Compact JWS signing with Ed25519 through node:crypto, synchronously. Access tokens are signed
 * once per /token request, so this avoids the thread-pool round trip of WebCrypto; verification
 * stays with jose.
 */
import { KeyObject, sign } from 'node:crypto';

const keyObjects = new WeakMap<object, KeyObject>();

function keyObjectOf(key: unknown): KeyObject {
  if (key instanceof KeyObject) return key;
  let ko = keyObjects.get(key as object);
  if (!ko) {
    ko = KeyObject.from(key as Parameters<typeof KeyObject.from>[0]);
    keyObjects.set(key as object, ko);
  }
  return ko;
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** `header.payload.signature` with an Ed25519 private key (`alg: EdDSA`). */
export function signEdDsaJwt(header: { alg: 'EdDSA'; typ: string; kid: string }, payload: object, privateKey: unknown): string {
  const key = keyObjectOf(privateKey);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('signEdDsaJwt needs an Ed25519 private key');
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}
