/** Tables of webhooks: endpoints, the delivery outbox and the attempt log. */
export interface WebhookEndpointsTable {
  id: string;
  tenant_id: string;
  organization_id: string;
  url: string;
  /** JSON array of event types, or ["*"]. */
  events: string;
  /** whsec_… under envelope encryption. */
  secret_enc: string;
  created_at: number;
  /** Last change of url or events (created_at until then). */
  updated_at: number;
}

/**
 * The columns an outbox row has after its own (webhook deliveries, back-channel logout
 * deliveries): where its attempts stand, claimed with a lease (storage/codec.ts outboxState).
 */
export interface OutboxStateColumns {
  /** pending | delivering | delivered | failed */
  status: string;
  attempts: number;
  /** Attempts allowed in all (the retry schedule's length; a webhook replay raises it by one). */
  attempt_limit: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveriesTable extends OutboxStateColumns {
  /** whd_…: the `webhook-id` header, stable across attempts. */
  id: string;
  tenant_id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The exact request body, identical on every attempt. */
  body: string;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
