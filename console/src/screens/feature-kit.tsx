/**
 * Small pieces the screens of the later features (connected accounts, credentials, SSO, MFA
 * policy) share beyond console/src/components: text fields read as lists or `name = value`
 * lines, and facts shown as a definition list.
 */
import type { Page } from '../api';
import { useCursors } from '../components/lists';
import { useLoad } from '../ui';
import './features.css';

/**
 * One page (of up to 100) of a cursor-paged list, with the cursors to page it (components/lists
 * Pager): `load` fetches the page after a cursor; `deps` are what else the list depends on.
 */
export function usePage<T>(load: (page: { limit: number; after: string | undefined }) => Promise<Page<T>>, deps: unknown[]) {
  const cursors = useCursors();
  const list = useLoad(() => load({ limit: 100, after: cursors.after }), [...deps, cursors.after]);
  return { list, cursors };
}

/** Words separated by spaces or commas. */
export const words = (s: string) => s.split(/[\s,]+/).filter(Boolean);

/** `name = value` lines (blank lines skipped); throws on a line without `=`. */
export function pairs(text: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`${what}: write each line as name = value ("${line}" has no name = value).`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

export const pairLines = (o: Record<string, string>) =>
  Object.entries(o)
    .map(([k, v]) => `${k} = ${v}`)
    .join('\n');

/** One fact of a `<dl className="facts">`; values (often copied elsewhere) are code. */
export function Fact({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        <code className="data">{value}</code>
      </dd>
    </div>
  );
}
