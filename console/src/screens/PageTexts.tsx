import { useState } from 'react';
import { call, client } from '../api';
import { FormCard, useSubmit } from '../components/forms';
import { LoadedItem } from '../components/lists';
import { Field, useLoad, when } from '../ui';
import './features.css';

type Locale = 'en' | 'de';
type Texts = Partial<Record<Locale, Record<string, string>>>;

const LANGUAGES: Record<Locale, string> = { en: 'English', de: 'German' };
const LOCALES = Object.keys(LANGUAGES) as Locale[];

/** `key = text` lines ⇄ a locale's messages (a line without " = " is refused by the API as an unknown key). */
const toLines = (messages: Record<string, string> = {}) =>
  Object.entries(messages)
    .map(([key, text]) => `${key} = ${text}`)
    .join('\n');
const fromLines = (lines: string) =>
  Object.fromEntries(
    lines
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const at = line.indexOf('=');
        return at < 0 ? [line.trim(), ''] : [line.slice(0, at).trim(), line.slice(at + 1).trim()];
      }),
  );

/** The hosted pages' language: the default locale, and the tenant's own texts per locale (docs/branding.md). */
export function PageTexts() {
  const texts = useLoad(() => call(client.GET('/branding/texts')), []);
  return (
    <>
      <DefaultLocaleForm />
      <section aria-labelledby="texts-title">
        <h2 id="texts-title">Texts</h2>
        <p className="muted">
          Replace any message of the hosted pages, per language: one <code>key = text</code> per line (keys such as <code>login.heading</code>; see
          docs/branding.md). A message keeps its <code>{'{placeholders}'}</code>. Empty: the built-in texts.
        </p>
        <LoadedItem state={texts} what="the texts">
          {(all) => (
            <>
              {LOCALES.map((locale) => (
                <LocaleTextsForm key={locale} locale={locale} all={all} onSaved={texts.reload} />
              ))}
            </>
          )}
        </LoadedItem>
      </section>
    </>
  );
}

function DefaultLocaleForm() {
  const current = useLoad(() => call(client.GET('/branding/locale')), []);
  const [choice, setChoice] = useState<Locale>();
  const [note, setNote] = useState('');
  const value = choice ?? current.data?.default_locale ?? 'en';
  const form = useSubmit(async () => {
    const r = await call(client.PUT('/branding/locale', { body: { default_locale: value } }));
    setNote(`Default language saved: ${LANGUAGES[r.default_locale]}.`);
    setChoice(undefined);
    current.reload();
  });
  return (
    <LoadedItem state={current} what="the default language">
      {(s) => (
        <FormCard id="texts-locale" title="Default language" submit="Save default language" form={form} status={note}>
          <Field
            id="texts-locale-choice"
            label="Language of the hosted pages"
            hint="When neither the application (ui_locales) nor the browser asks for a language Keyhall has."
          >
            <select id="texts-locale-choice" value={value} onChange={(e) => setChoice(e.target.value as Locale)}>
              {LOCALES.map((l) => (
                <option key={l} value={l}>
                  {LANGUAGES[l]}
                </option>
              ))}
            </select>
          </Field>
          <p className="muted">{s.updated_at ? `Set ${when(s.updated_at)}.` : 'Never set: English.'}</p>
        </FormCard>
      )}
    </LoadedItem>
  );
}

function LocaleTextsForm({ locale, all, onSaved }: { locale: Locale; all: Texts; onSaved: () => void }) {
  const [lines, setLines] = useState(toLines(all[locale]));
  const [note, setNote] = useState('');
  const form = useSubmit(async () => {
    const saved = await call(client.PUT('/branding/texts', { body: { ...all, [locale]: fromLines(lines) } }));
    setNote(`${LANGUAGES[locale]} texts saved: ${Object.keys(saved[locale] ?? {}).length} replaced.`);
    onSaved();
  });
  const id = `texts-${locale}`;
  return (
    <FormCard id={id} title={`${LANGUAGES[locale]} texts`} heading="h3" submit={`Save ${LANGUAGES[locale]} texts`} form={form} status={note}>
      <Field id={`${id}-lines`} label={`${LANGUAGES[locale]} messages (key = text)`}>
        <textarea id={`${id}-lines`} rows={6} value={lines} onChange={(e) => setLines(e.target.value)} spellCheck={false} />
      </Field>
    </FormCard>
  );
}
