/**
 * The filterable attributes of a SCIM resource type and path normalisation, shared by the filter
 * compiler (src/storage/scim-filter.ts), sorting and PATCH paths.
 */

export type AttributeSpec =
  | {
      kind: 'string';
      column: string;
      /** caseExact false: compared lower-cased; `storedLower` columns already hold lower case. */
      caseExact: boolean;
      storedLower?: boolean;
    }
  | { kind: 'boolean'; column: string }
  | { kind: 'datetime'; column: string }
  /** Membership of a group: `members.value eq "<user id>"` via the join table. */
  | { kind: 'member'; groupColumn: string };

/** Lower-cased attribute path (core-schema URN stripped) → how to filter on it. */
export type AttributeMap = Record<string, AttributeSpec>;

/** `urn:…:core:2.0:User:userName` → `username`; extension paths keep their URN. */
export function normalizePath(path: string, coreSchema: string): string {
  const lower = path.toLowerCase();
  const core = `${coreSchema.toLowerCase()}:`;
  return lower.startsWith(core) ? lower.slice(core.length) : lower;
}
