/** Fixed-window request counters shared by every instance (rate limits). */
export interface RateLimitsTable {
  tenant_id: string;
  /** What is limited, e.g. `api_key:key_…`. */
  bucket: string;
  count: number;
  window_ends_at: number;
}

export interface LimitTables {
  rate_limits: RateLimitsTable;
}
