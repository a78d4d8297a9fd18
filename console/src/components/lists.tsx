/** Loaded lists: loading/error/empty states, tables, selectable rows and cursor paging. */
import { type ReactNode, useState } from 'react';
import type { Page } from '../api';
import { ConfirmButton, Empty, ErrorNote, Loading } from '../ui';

/** What useLoad returns, as far as the states below need it. */
export interface LoadState {
  loading: boolean;
  error?: unknown;
}

/** "Loading …" (role="status") while loading, then the error (role="alert") if any. */
export function LoadStatus({ state, what }: { state: LoadState; what: string }) {
  return (
    <>
      {state.loading ? <Loading what={what} /> : null}
      <ErrorNote error={state.error} />
    </>
  );
}

/**
 * The load → loading / error / empty / content block of a list. `rows` is undefined until the
 * first load answers (it may be filtered); `children` renders a non-empty list.
 */
export function Loaded<R>({
  state,
  rows,
  what,
  empty,
  children,
}: {
  state: LoadState;
  rows: R[] | undefined;
  what: string;
  empty: ReactNode;
  children: (rows: R[]) => ReactNode;
}) {
  return (
    <>
      <LoadStatus state={state} what={what} />
      {rows && rows.length === 0 ? <Empty>{empty}</Empty> : null}
      {rows && rows.length > 0 ? children(rows) : null}
    </>
  );
}

/**
 * One loaded item (a detail pane): "Loading …" until it first arrives (a reload keeps showing
 * it), the error if loading failed, else `children` with it.
 */
export function LoadedItem<T>({ state, what, children }: { state: LoadState & { data?: T }; what: string; children: (item: T) => ReactNode }) {
  if (state.loading && state.data === undefined) return <Loading what={what} />;
  if (state.error || state.data === undefined) return <ErrorNote error={state.error} />;
  return children(state.data);
}

/** A column heading; `hidden` ones are read by screen readers only (e.g. "Actions"). */
export type Column = string | { hidden: string };

/** A scrollable table (reflows at 390 px), one row per item. */
export function DataTable<R>({
  columns,
  rows,
  rowKey,
  rowProps,
  children,
}: {
  columns: Column[];
  rows: R[];
  rowKey: (row: R) => string;
  rowProps?: (row: R) => Record<`data-${string}`, string>;
  children: (row: R) => ReactNode;
}) {
  return (
    <div className="table">
      <table>
        <thead>
          <tr>
            {columns.map((c) =>
              typeof c === 'string' ? (
                <th scope="col" key={c}>
                  {c}
                </th>
              ) : (
                <th scope="col" key={c.hidden}>
                  <span className="visually-hidden">{c.hidden}</span>
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={rowKey(r)} {...rowProps?.(r)}>
              {children(r)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A list whose items choose what the detail pane shows: each is a toggle button (aria-pressed
 * when chosen), followed by the item's `actions` if any.
 */
/** Removing a row after an in-place confirmation (`run` calls the API, reloads, says what happened). */
export interface RowRemoval<R> {
  label: string;
  confirmLabel: string;
  question: (row: R) => string;
  run: (row: R) => Promise<void>;
}

export function PickList<R>({
  rows,
  rowKey,
  selected,
  onPick,
  actions,
  remove,
  children,
}: {
  rows: R[];
  rowKey: (row: R) => string;
  selected: string | undefined;
  /** A row was picked; undefined when the picked row was removed. */
  onPick: (key: string | undefined) => void;
  actions?: (row: R) => ReactNode;
  remove?: RowRemoval<R>;
  children: (row: R) => ReactNode;
}) {
  return (
    <ul className="pick">
      {rows.map((r) => {
        const key = rowKey(r);
        return (
          <li key={key}>
            <button type="button" aria-pressed={key === selected} onClick={() => onPick(key)}>
              {children(r)}
            </button>
            {actions?.(r)}
            {remove ? (
              <ConfirmButton
                label={remove.label}
                question={remove.question(r)}
                confirmLabel={remove.confirmLabel}
                onConfirm={async () => {
                  await remove.run(r);
                  if (key === selected) onPick(undefined);
                }}
              />
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}

/** The cursors of the pages before this one; `after` is the one to load now. */
export function useCursors() {
  const [stack, setStack] = useState<string[]>([]);
  return {
    after: stack[stack.length - 1],
    hasPrevious: stack.length > 0,
    previous: () => setStack((s) => s.slice(0, -1)),
    next: (cursor: string) => setStack((s) => [...s, cursor]),
    reset: () => setStack([]),
  };
}

/** Previous page / Next page, each shown only when there is such a page. */
export function Pager({ cursors, page }: { cursors: ReturnType<typeof useCursors>; page: Page<unknown> | undefined }) {
  const next = page?.has_more ? page.next_cursor : null;
  return (
    <div className="pager">
      {cursors.hasPrevious ? (
        <button type="button" onClick={cursors.previous}>
          Previous page
        </button>
      ) : null}
      {next ? (
        <button type="button" onClick={() => cursors.next(next)}>
          Next page
        </button>
      ) : null}
    </div>
  );
}
