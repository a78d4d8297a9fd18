/** The languages of the hosted pages (a catalogue each in this folder); discovery's `ui_locales_supported`. */
export const LOCALES = ['en', 'de'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';
