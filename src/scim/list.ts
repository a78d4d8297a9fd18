/**
 * List query parameters (RFC 7644 §3.4.2): filter, startIndex, count, sortBy, sortOrder,
 * attributes, excludedAttributes — with the RFC's paging edge cases.
 */
import { scimErrors } from './errors.js';
import { parseFilter, type FilterNode } from './filter/parse.js';
import { normalizePath } from './filter/attributes.js';
import { parseAttributeList } from './projection.js';

/** The largest page served (advertised as filter.maxResults). */
export const MAX_RESULTS = 200;
export const DEFAULT_COUNT = 100;

export interface ListParams {
  filter?: FilterNode;
  startIndex: number;
  count: number;
  sortBy?: string;
  descending: boolean;
  attributes?: string[];
  excludedAttributes?: string[];
}

const one = (v: unknown, name: string): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw scimErrors.invalidValue(`${name} may be given once`);
  return v;
};

function integer(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^-?\d{1,15}$/.test(raw.trim())) throw scimErrors.invalidValue(`${name} must be an integer`);
  return Number(raw.trim());
}

/**
 * startIndex < 1 is treated as 1; a negative count as 0 (totalResults only); count above
 * MAX_RESULTS is capped. `sortKeys` maps lower-cased attribute paths to sortable columns.
 */
export function parseListParams(query: Record<string, unknown>, coreSchema: string, sortKeys: Record<string, string>): ListParams {
  const filter = one(query.filter, 'filter');
  const startIndex = Math.max(1, integer(one(query.startIndex, 'startIndex'), 'startIndex') ?? 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, integer(one(query.count, 'count'), 'count') ?? DEFAULT_COUNT));
  const sortByRaw = one(query.sortBy, 'sortBy');
  let sortBy: string | undefined;
  if (sortByRaw !== undefined) {
    const path = normalizePath(sortByRaw.trim(), coreSchema);
    // Own keys only: a name such as `constructor` is not an attribute (Object's prototype has it).
    sortBy = Object.hasOwn(sortKeys, path) ? sortKeys[path] : undefined;
    if (!sortBy) throw scimErrors.invalidValue(`cannot sort by '${sortByRaw}'`);
  }
  const order = one(query.sortOrder, 'sortOrder');
  if (order !== undefined && !/^(ascending|descending)$/i.test(order)) throw scimErrors.invalidValue('sortOrder is ascending or descending');
  return {
    filter: filter === undefined ? undefined : parseFilter(filter),
    startIndex,
    count,
    sortBy,
    descending: order?.toLowerCase() === 'descending',
    attributes: parseAttributeList(one(query.attributes, 'attributes')),
    excludedAttributes: parseAttributeList(one(query.excludedAttributes, 'excludedAttributes')),
  };
}

/** What listPage reads a page from: a connection's users or groups (storage/repos/directory-*.ts). */
interface PagedRepo<Where, Sort, Row> {
  count(connectionId: string, where?: Where): Promise<number>;
  list(connectionId: string, q: { where?: Where; sortBy: Sort; descending: boolean; offset: number; limit: number }): Promise<Row[]>;
}

/**
 * One page of a connection's resources and the total matching `where`. `p.sortBy` is already one
 * of the repository's sortable columns (parseListParams' `sortKeys`); count 0 reads the total alone.
 */
export async function listPage<Where, Sort, Row>(repo: PagedRepo<Where, Sort, Row>, connectionId: string, where: Where | undefined, p: ListParams) {
  const total = await repo.count(connectionId, where);
  const page = { where, sortBy: (p.sortBy ?? 'id') as Sort, descending: p.descending, offset: p.startIndex - 1, limit: p.count };
  const rows = p.count === 0 ? [] : await repo.list(connectionId, page);
  return { total, rows };
}
