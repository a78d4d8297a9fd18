import { readFileSync } from 'node:fs';

/**
 * Keyhall's version, from package.json (read once; src/kernel and dist/kernel are both two
 * levels below it). Outbound requests name it in their User-Agent.
 */
export const KEYHALL_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
