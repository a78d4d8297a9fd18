/** Audit events shown in tables (the Events feed and the Overview's recent events). */
import type { AuditEvent } from '../api';
import { whenSeconds } from '../ui';

/** The When, Type and Actor cells of an event's row. */
export function EventCells({ event }: { event: AuditEvent }) {
  return (
    <>
      <td>{whenSeconds(event.created)}</td>
      <td>
        <code>{event.type}</code>
      </td>
      <td>
        {event.actor.type}
        {event.actor.id ? <code> {event.actor.id}</code> : null}
      </td>
    </>
  );
}

/** A value of an event's data as text: ids and other strings as they are, lists comma-separated. */
function fieldText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object')) return value.length ? value.map(String).join(', ') : '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * An event's data as fields, one a line (docs/events.md lists each type's fields); a nested
 * object is a list of its own, one level deep (deeper ones as JSON).
 */
export function EventData({ data, nested = false }: { data: Record<string, unknown>; nested?: boolean }) {
  const entries = Object.entries(data);
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <dl className="fields">
      {entries.map(([key, value]) => (
        <div key={key} className="contents">
          <dt>{key}</dt>
          <dd>
            {!nested && value !== null && typeof value === 'object' && !Array.isArray(value) ? (
              <EventData data={value as Record<string, unknown>} nested />
            ) : (
              fieldText(value)
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}
