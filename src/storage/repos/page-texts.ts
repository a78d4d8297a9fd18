import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface PageTextsRecord {
  defaultLocale: string;
  /** `{ locale: { messageKey: text } }`. */
  overrides: Record<string, Record<string, string>>;
  updatedAt: number;
}

/** A tenant's hosted-page language settings (src/screens/i18n); no row: the defaults. */
export class PageTextsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(tenantId: string): Promise<PageTextsRecord | undefined> {
    const row = await this.db.selectFrom('page_texts').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return (
      row && { defaultLocale: row.default_locale, overrides: JSON.parse(row.overrides) as PageTextsRecord['overrides'], updatedAt: Number(row.updated_at) }
    );
  }

  async put(tenantId: string, r: PageTextsRecord): Promise<void> {
    const values = { default_locale: r.defaultLocale, overrides: JSON.stringify(r.overrides), updated_at: r.updatedAt };
    await this.db
      .insertInto('page_texts')
      .values({ tenant_id: tenantId, ...values })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet(values))
      .execute();
  }
}
