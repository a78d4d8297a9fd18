/**
 * Server-provided DPoP nonces (RFC 9449 §8/§9), stateless so every instance accepts every other
 * instance's nonces: `<window>.<HMAC-SHA256(secret, tenant|window)>`. A nonce is valid in its
 * time window and the next, and only on the tenant it was made for.
 */
import { createHmac } from 'node:crypto';
import { safeEqual } from '../../kernel/crypto/hash.js';

export const DPOP_NONCE_WINDOW_MS = 5 * 60 * 1000;

export class DpopNonces {
  #secret: Promise<Buffer> | undefined;

  constructor(private readonly loadSecret: () => Promise<Buffer>) {}

  async #mac(tenantId: string, window: number): Promise<string> {
    this.#secret ??= this.loadSecret().catch((err) => {
      this.#secret = undefined;
      throw err;
    });
    return createHmac('sha256', await this.#secret)
      .update(`${tenantId}|${window}`)
      .digest('base64url');
  }

  async issue(tenantId: string, now: number): Promise<string> {
    const window = Math.floor(now / DPOP_NONCE_WINDOW_MS);
    return `${window.toString(36)}.${await this.#mac(tenantId, window)}`;
  }

  async isValid(tenantId: string, nonce: unknown, now: number): Promise<boolean> {
    if (typeof nonce !== 'string' || nonce.length > 128) return false;
    const [w, mac] = nonce.split('.');
    const window = parseInt(w ?? '', 36);
    const current = Math.floor(now / DPOP_NONCE_WINDOW_MS);
    if (!Number.isSafeInteger(window) || window.toString(36) !== w || window > current || window < current - 1 || !mac) return false;
    return safeEqual(mac, await this.#mac(tenantId, window));
  }
}
