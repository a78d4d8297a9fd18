/**
 * The language of the hosted pages per tenant (docs/branding.md): its default locale and the
 * catalogue messages it replaces, per locale, stored in `page_texts`. The pages read them through
 * `texts` (src/http/screens/csp.ts sendPage); /v1/branding/texts and /v1/branding/locale set them.
 *
 * Every hosted page renders with them, so `texts` is cached per instance like the tenant and
 * client caches (docs/performance.md): a change made on this instance is seen at once (the entry
 * is dropped after its transaction commits), one made on another instance within `ttlMs`
 * (KEYHALL_CACHE_TTL_MS), measured on the injected clock.
 */
import type { Actor } from '../../events/catalogue.js';
import { errors } from '../../kernel/errors.js';
import { Lru } from '../../kernel/lru.js';
import { DEFAULT_LOCALE, en, isLocale, isMessageKey, type Locale, LOCALES, NO_TENANT_TEXTS, type TenantTexts } from '../../screens/i18n/index.js';
import type { PageTextsRecord } from '../../storage/repos/page-texts.js';
import { iso, type ManagementDeps, reposOf } from '../common.js';

/** `{ locale: { messageKey: text } }` as sent and answered. */
export type TextsView = Record<string, Record<string, string>>;

export interface LocaleView {
  default_locale: Locale;
  updated_at: string | null;
}

const placeholders = (text: string) => new Set([...text.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!));

/** The checks of one override, in order: a supported locale, a catalogue key, only that message's placeholders. */
export function checkOverrides(texts: TextsView): void {
  for (const [locale, messages] of Object.entries(texts)) {
    if (!isLocale(locale)) throw errors.invalidRequest(`unknown locale "${locale.slice(0, 20)}" (supported: ${LOCALES.join(', ')})`);
    for (const [key, text] of Object.entries(messages)) {
      if (!isMessageKey(key)) throw errors.invalidRequest(`unknown message key "${key.slice(0, 100)}" in ${locale}`);
      const allowed = placeholders(en[key]);
      const stray = [...placeholders(text)].find((p) => !allowed.has(p));
      if (stray)
        throw errors.invalidRequest(
          `${locale} ${key}: {${stray}} is not a placeholder of this message${allowed.size ? ` (it has ${[...allowed].map((p) => `{${p}}`).join(', ')})` : ''}`,
        );
    }
  }
}

/** The overrides, frozen to the messages: every page of the tenant shares the cached object. */
const frozen = (overrides: TenantTexts['overrides']): TenantTexts['overrides'] =>
  Object.freeze(Object.fromEntries(Object.entries(overrides).map(([locale, m]) => [locale, Object.freeze({ ...m })])));

const withoutEmpty = (texts: TextsView): TextsView => Object.fromEntries(Object.entries(texts).filter(([, m]) => Object.keys(m).length > 0));

/** How long an instance keeps a tenant's texts, and for how many tenants (KEYHALL_CACHE_TTL_MS, KEYHALL_CACHE_MAX_TENANTS). */
export interface TextsCacheOptions {
  ttlMs: number;
  maxTenants: number;
}

export class BrandingTextsService {
  readonly #cache: Lru<string, { at: number; texts: TenantTexts }>;

  constructor(
    private readonly deps: ManagementDeps,
    private readonly cache: TextsCacheOptions = { ttlMs: 5_000, maxTenants: 10_000 },
  ) {
    this.#cache = new Lru(cache.maxTenants);
  }

  #stored(tenantId: string): Promise<PageTextsRecord | undefined> {
    return reposOf(this.deps).pageTexts.get(tenantId);
  }

  /** What a hosted page renders with (cached: see above). Shared by every page of the tenant, hence frozen. */
  async texts(tenantId: string): Promise<TenantTexts> {
    const now = this.deps.clock.now();
    const hit = this.#cache.get(tenantId);
    if (hit && now - hit.at < this.cache.ttlMs && now >= hit.at) return hit.texts;
    const stored = await this.#stored(tenantId);
    const texts: TenantTexts = stored
      ? {
          defaultLocale: isLocale(stored.defaultLocale) ? stored.defaultLocale : DEFAULT_LOCALE,
          overrides: frozen(stored.overrides as TenantTexts['overrides']),
        }
      : NO_TENANT_TEXTS;
    if (this.cache.ttlMs > 0) this.#cache.set(tenantId, { at: now, texts: Object.freeze(texts) });
    return texts;
  }

  async getTexts(tenantId: string): Promise<TextsView> {
    return (await this.#stored(tenantId))?.overrides ?? {};
  }

  /** Replaces every override of the tenant (an empty object clears them). */
  async putTexts(tenantId: string, actor: Actor, texts: TextsView): Promise<TextsView> {
    checkOverrides(texts);
    const overrides = withoutEmpty(texts);
    const now = this.deps.clock.now();
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      const stored = await r.pageTexts.get(tenantId);
      await r.pageTexts.put(tenantId, { defaultLocale: stored?.defaultLocale ?? DEFAULT_LOCALE, overrides, updatedAt: now });
      const counts = Object.fromEntries(Object.entries(overrides).map(([locale, m]) => [locale, Object.keys(m).length]));
      await this.deps.events.record(trx, { tenantId, type: 'branding.texts.updated', organizationId: null, actor, data: { overrides: counts } });
    });
    this.#cache.delete(tenantId);
    return overrides;
  }

  async getLocale(tenantId: string): Promise<LocaleView> {
    const stored = await this.#stored(tenantId);
    return {
      default_locale: stored && isLocale(stored.defaultLocale) ? stored.defaultLocale : DEFAULT_LOCALE,
      updated_at: stored ? iso(stored.updatedAt) : null,
    };
  }

  async putLocale(tenantId: string, actor: Actor, locale: Locale): Promise<LocaleView> {
    const now = this.deps.clock.now();
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      const stored = await r.pageTexts.get(tenantId);
      await r.pageTexts.put(tenantId, { defaultLocale: locale, overrides: stored?.overrides ?? {}, updatedAt: now });
      await this.deps.events.record(trx, { tenantId, type: 'branding.locale.updated', organizationId: null, actor, data: { default_locale: locale } });
    });
    this.#cache.delete(tenantId);
    return { default_locale: locale, updated_at: iso(now) };
  }
}
