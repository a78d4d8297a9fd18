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
