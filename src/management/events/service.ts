/** The /v1/events feed over the audit trail: a cursor that resolves to the commit order. */
import { eventView } from '../../events/recorder.js';
import { errors } from '../../kernel/errors.js';
import type { EventRepo } from '../../storage/repos/events.js';

export interface FeedQuery {
  /** The event id to continue after (the previous page's `next_cursor`). */
  after?: string | undefined;
  limit: number;
  types?: string[] | undefined;
  /** Only this organization's events. */
  organizationId?: string | undefined;
  /** The organization an org-bound key is limited to: cursors resolve only among its events. */
  visibleTo?: string | undefined;
  /** Only events of this actor type (and, with `actorId`, this actor). */
  actorType?: string | undefined;
  actorId?: string | undefined;
  /** `asc`: oldest first, `after` continues forward; `desc`: newest first, `after` continues back in time. */
  order: 'asc' | 'desc';
}

export class EventFeedService {
  constructor(private readonly repo: EventRepo) {}

  async page(tenantId: string, q: FeedQuery) {
    let cursorSeq: number | undefined;
    if (q.after !== undefined) {
      cursorSeq = await this.repo.findSeq(tenantId, q.after, q.visibleTo);
      if (cursorSeq === undefined) throw errors.invalidRequest('after: unknown event id');
    }
    const rows = await this.repo.list({
      tenantId,
      limit: q.limit + 1,
      order: q.order,
      ...(q.order === 'asc' ? { afterSeq: cursorSeq ?? 0 } : { beforeSeq: cursorSeq }),
      types: q.types,
      organizationId: q.visibleTo ?? q.organizationId,
      actorType: q.actorType,
      actorId: q.actorId,
    });
    const data = rows.slice(0, q.limit);
    return {
      data: data.map(eventView),
      next_cursor: data[data.length - 1]?.id ?? q.after ?? null,
      has_more: rows.length > q.limit,
    };
  }
}
