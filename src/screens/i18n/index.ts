/**
 * The language of a hosted page and its texts: the catalogues (en, de), the tenant's overrides,
 * the choice of locale (the flow's `ui_locales`, then `Accept-Language`, then the tenant's
 * default) and the translator a page template renders with.
 */
import { escapeHtml, Html, html } from '../html.js';
import { de } from './de.js';
import { type Catalogue, en, type MessageKey } from './en.js';
import { DEFAULT_LOCALE, type Locale, LOCALES } from './locales.js';

export { en, type Catalogue, type MessageKey } from './en.js';
export { DEFAULT_LOCALE, type Locale, LOCALES } from './locales.js';

export const CATALOGUES: Readonly<Record<Locale, Catalogue>> = { en, de };

const KEYS = new Set<string>(Object.keys(en));
export const isLocale = (value: string): value is Locale => (LOCALES as readonly string[]).includes(value);
export const isMessageKey = (value: string): value is MessageKey => KEYS.has(value);

/** A tenant's texts: its default locale and, per locale, the messages it replaces. */
export interface TenantTexts {
  defaultLocale: Locale;
  overrides: Partial<Record<Locale, Partial<Record<MessageKey, string>>>>;
}

export const NO_TENANT_TEXTS: TenantTexts = Object.freeze({ defaultLocale: DEFAULT_LOCALE, overrides: {} });

/** The first supported language of a list of tags (`de-CH` counts as `de`), or undefined. */
function firstSupported(tags: readonly string[]): Locale | undefined {
  for (const tag of tags) {
    const primary = tag.trim().toLowerCase().split('-')[0] ?? '';
    if (isLocale(primary)) return primary;
  }
  return undefined;
}

/** `Accept-Language` (RFC 9110 §12.5.4): the tags by descending q (ties keep their order), q=0 dropped. */
export function acceptLanguageTags(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 1024)
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.split(';');
      // A malformed weight (RFC 9110 §12.4.2 qvalue) counts as none wanted.
      const q = params.map((p) => p.trim()).find((p) => /^q\s*=/i.test(p));
      const value = q?.replace(/^q\s*=\s*/i, '');
      const weight = value === undefined ? 1 : /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value) ? Number(value) : 0;
      return { tag: tag.trim(), weight, i };
    })
    .filter((e) => e.tag !== '' && e.tag !== '*' && e.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.i - b.i)
    .map((e) => e.tag);
}

/** The locale of a page: the flow's `ui_locales` (in order), then `Accept-Language`, then the tenant's default. */
export function negotiateLocale(o: { uiLocales?: readonly string[] | null; acceptLanguage?: string; tenantDefault: Locale }): Locale {
  return firstSupported(o.uiLocales ?? []) ?? firstSupported(acceptLanguageTags(o.acceptLanguage)) ?? o.tenantDefault;
}

type Value = Parameters<typeof html>[1];
export type Vars = Record<string, string | number>;

export interface Translator {
  readonly locale: Locale;
  /** The message as plain text (escaped where a template inserts it), its `{name}`s filled from `vars`. */
  (key: MessageKey, vars?: Vars): string;
  /** The message as markup: its text escaped, each `{name}` replaced by the rendered value (markup stays markup). */
  html(key: MessageKey, vars: Record<string, Value>): Html;
  /**
   * A text another layer wrote in English (a service's refusal, an error's description: the
   * catalogue's `error.*`, `sso.*`, `social.*` and `passkey.*` messages): the message it is, in this locale;
   * a text the catalogue does not know stays as it is in English and is `fallback` in any other
   * language.
   */
  known(text: string, fallback: MessageKey): string;
}

const fill = (text: string, vars: Vars = {}) => text.replace(/\{([a-z_]+)\}/g, (m, name: string) => (Object.hasOwn(vars, name) ? String(vars[name]) : m));

/** The messages other layers write in English: error descriptions, SSO failures, passkey refusals. */
const FROM_OTHER_LAYERS = ['error.', 'sso.', 'social.', 'passkey.'];

/** Each of those English messages as a pattern, its placeholders capturing: how `known` recognizes a text. */
const PATTERNS: Array<{ key: MessageKey; names: string[]; pattern: RegExp }> = (Object.keys(en) as MessageKey[])
  .filter((key) => FROM_OTHER_LAYERS.some((p) => key.startsWith(p)))
  .map((key) => {
    const names: string[] = [];
    const source = en[key].split(/(\{[a-z_]+\})/).map((part) => {
      const name = /^\{([a-z_]+)\}$/.exec(part)?.[1];
      if (!name) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(name);
      return '([\\s\\S]*?)';
    });
    return { key, names, pattern: new RegExp(`^${source.join('')}$`) };
  });

function recognize(text: string): { key: MessageKey; vars: Vars } | undefined {
  for (const { key, names, pattern } of PATTERNS) {
    const m = pattern.exec(text);
    if (m) return { key, vars: Object.fromEntries(names.map((n, i) => [n, m[i + 1] ?? ''])) };
  }
  return undefined;
}

export function translator(locale: Locale, texts: TenantTexts = NO_TENANT_TEXTS): Translator {
  const catalogue = CATALOGUES[locale];
  const own = texts.overrides[locale] ?? {};
  const raw = (key: MessageKey) => (Object.hasOwn(own, key) ? own[key]! : catalogue[key]);
  const t = ((key: MessageKey, vars?: Vars) => fill(raw(key), vars)) as Translator;
  Object.defineProperty(t, 'locale', { value: locale });
  t.html = (key, vars) =>
    new Html(
      raw(key)
        .split(/(\{[a-z_]+\})/)
        .map((part) => {
          const name = /^\{([a-z_]+)\}$/.exec(part)?.[1];
          return name && Object.hasOwn(vars, name) ? html`${vars[name]}`.value : escapeHtml(part);
        })
        .join(''),
    );
  t.known = (text, fallback) => {
    const found = recognize(text);
    if (found) return t(found.key, found.vars);
    return locale === 'en' ? text : t(fallback);
  };
  return t;
}

/**
 * A page's message as a layer without a language hands it on (the sign-in engine, a route): a
 * catalogue key (its placeholders filled with other messages), or a service's English refusal,
 * shown as the catalogue's message it is (else `fallback` outside English).
 */
export type Message = MessageKey | { key: MessageKey; parts: Record<string, MessageKey> } | { english: string; fallback: MessageKey };

/** A message in the translator's language. */
export function textOf(t: Translator, m: Message | undefined): string | undefined {
  if (m === undefined) return undefined;
  if (typeof m === 'string') return t(m);
  if ('english' in m) return t.known(m.english, m.fallback);
  return t(m.key, Object.fromEntries(Object.entries(m.parts).map(([name, key]) => [name, t(key)])));
}
