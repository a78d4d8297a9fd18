import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export class MasterKeyError extends Error {}

export const MASTER_KEY_FILE = 'master.key';

function decode(base64: string, source: string): Buffer {
  const trimmed = base64.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new MasterKeyError(`${source} is not base64`);
  const key = Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new MasterKeyError(`${source} must decode to 32 bytes, got ${key.length}`);
  return key;
}

/**
 * The master key: KEYHALL_MASTER_KEY when set; otherwise, for the embedded default only, a key
 * file in the data directory, created with mode 0600 on first start and refused if other users
 * can read it.
 */
export function loadMasterKey(opts: { env?: string; dataDir: string; allowKeyFile: boolean }): Buffer {
  if (opts.env) return decode(opts.env, 'KEYHALL_MASTER_KEY');
  if (!opts.allowKeyFile) {
    throw new MasterKeyError('KEYHALL_MASTER_KEY is required with KEYHALL_DATABASE_URL (every instance needs the same key)');
  }
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(opts.dataDir, MASTER_KEY_FILE);
  try {
    fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) {
    throw new MasterKeyError(`${file} is readable by other users (mode ${mode.toString(8)}); run chmod 600`);
  }
  return decode(fs.readFileSync(file, 'utf8'), file);
}
