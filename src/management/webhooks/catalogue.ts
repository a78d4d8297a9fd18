// Data only, imported by the catalogues (the protocol cores included): it imports nothing.
/** What the webhooks feature adds to the catalogues: its API-key permissions (management/permissions.ts) and its events (events/catalogue.ts). */
export const webhooksCatalogue = {
  permissions: ['webhooks:read', 'webhooks:write'],
  events: {
    'webhook_endpoint.created': { webhook: false, description: 'a webhook endpoint was registered' },
    'webhook_endpoint.updated': { webhook: false, description: "a webhook endpoint's url or event types changed" },
    'webhook_endpoint.deleted': { webhook: false, description: 'a webhook endpoint was removed' },
    // Never delivered to webhooks: a failing endpoint's failure event would itself be a delivery
    // to the failing endpoints (a loop). Read it from GET /v1/events.
    'webhook_delivery.failed': { webhook: false, description: 'a webhook delivery used up its attempts and is failed' },
  },
} as const;
