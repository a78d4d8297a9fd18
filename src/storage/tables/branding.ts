/** Tables of the hosted pages' language (issue 28): a tenant's default locale and its own texts. */
export interface PageTextsTable {
  tenant_id: string;
  /** `en` | `de`: the pages' language when neither `ui_locales` nor `Accept-Language` names one. */
  default_locale: string;
  /** JSON `{ locale: { messageKey: text } }`: the messages the tenant replaces. */
  overrides: string;
  updated_at: number;
}

export interface BrandingTables {
  page_texts: PageTextsTable;
}
