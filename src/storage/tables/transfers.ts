/** Tables of imports and exports (issue 33, docs/import-export.md). */
export interface TransferJobsTable {
  /** imp_… or exp_… */
  id: string;
  tenant_id: string;
  /** import | export */
  kind: string;
  /** running | succeeded | failed */
  status: string;
  /** The import's file format (auth0, firebase, keycloak, cognito, jsonl, csv) or `jsonl` for an export. */
  format: string;
  dry_run: number;
  include_secrets: number;
  /** JSON counts ({rows, created, updated, rejected, …}). */
  counts: string;
  /** JSON array of rejected rows {row, external_id?, email?, reason, detail?}; never a hash. */
  report: string;
  error: string | null;
  /** An export's JSONL under envelope encryption (context `transfer_job:<id>`). */
  output_enc: string | null;
  /** JSON {type, id}: who started it. */
  actor: string;
  created_at: number;
  /** Moved on by the running job after each batch: a running job whose heartbeat is old was interrupted. */
  heartbeat_at: number;
  finished_at: number | null;
}

export interface ImportExternalIdsTable {
  tenant_id: string;
  /** The system the id comes from (the import's format, or a source name given with it). */
  source: string;
  /** user | organization */
  kind: string;
  external_id: string;
  /** user_… or org_… */
  target_id: string;
  created_at: number;
}

export interface TransferTables {
  transfer_jobs: TransferJobsTable;
  import_external_ids: ImportExternalIdsTable;
}
