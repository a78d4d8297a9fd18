import type { Kysely } from 'kysely';
import { insertOnce } from '../atomic.js';
import type { Database } from '../schema.js';

/** Small installation-wide values (e.g. the master-key check value). */
export class MetaRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('keyhall_meta').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  /** Inserts the value unless the key exists; returns the value that is stored afterwards. */
  async setIfAbsent(key: string, value: string): Promise<string> {
    await insertOnce(this.db, 'keyhall_meta', { key, value }, { unique: ['key'] });
    return (await this.get(key)) ?? value;
  }
}
