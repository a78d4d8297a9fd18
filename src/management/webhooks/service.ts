import type { Actor, EventType } from '../../events/catalogue.js';
import { WEBHOOK_EVENT_TYPES } from '../../events/catalogue.js';
import type { Envelope } from '../../kernel/crypto/envelope.js';
import { errors } from '../../kernel/errors.js';
import { newId } from '../../kernel/ids.js';
import type { DeliveryStatus } from '../../storage/repos/webhook-deliveries.js';
import type { WebhookEndpointRecord } from '../../storage/repos/webhook-endpoints.js';
import { assertEgressUrl } from '../../egress/url.js';
import type { EgressPolicy, EgressResolver } from '../../egress/policy.js';
import { sealEndpointSecret } from '../../webhooks/endpoint-secret.js';
import { newWebhookSecret } from '../../webhooks/signer.js';
import { type ManagementDeps, reposOf } from '../common.js';

export interface WebhookDeps extends ManagementDeps {
  envelope: Envelope;
  egressPolicy: EgressPolicy;
  resolver?: EgressResolver;
}

/** Endpoints per organization: bounds the fan-out of one event. */
export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;

export const endpointView = (e: WebhookEndpointRecord) => ({
  endpoint_id: e.id,
  organization_id: e.organizationId,
  url: e.url,
  events: e.events,
  created_at: new Date(e.createdAt).toISOString(),
});

/** Omitted or ["*"] means every webhook event type, including ones added later. */
function checkEvents(events: string[] | undefined): string[] {
  if (events === undefined || (events.length === 1 && events[0] === '*')) return ['*'];
  const unknown = events.filter((t) => !WEBHOOK_EVENT_TYPES.includes(t as EventType));
  if (unknown.length) throw errors.invalidRequest(`events: not a webhook event type: ${unknown.join(', ')}`);
  return [...new Set(events)];
}

export class WebhookService {
  constructor(private readonly deps: WebhookDeps) {}

  async create(tenantId: string, actor: Actor, orgId: string, input: { url: string; events?: string[] }) {
    const events = checkEvents(input.events);
    const url = await assertEgressUrl(input.url, this.deps.egressPolicy, { resolver: this.deps.resolver });
    const now = this.deps.clock.now();
    const id = newId('we', now);
    const secret = newWebhookSecret();
    const endpoint: WebhookEndpointRecord = {
      id,
      tenantId,
      organizationId: orgId,
      url,
      events,
      secretEnc: sealEndpointSecret(this.deps.envelope, { tenantId, id }, secret),
      createdAt: now,
    };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = reposOf(this.deps, trx);
      if (!(await r.organizations.findShared(tenantId, orgId, this.deps.db.dialect))) throw errors.notFound('organization not found');
      const existing = await r.webhookEndpoints.listByOrganization(tenantId, orgId);
      if (existing.length >= MAX_ENDPOINTS_PER_ORGANIZATION) {
        throw errors.invalidRequest(`an organization can have at most ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints`);
      }
      await r.webhookEndpoints.insert(endpoint);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'webhook_endpoint.created',
        organizationId: orgId,
        actor,
        // Only the origin: receiver URLs often carry a capability token in the path or query.
        data: { endpoint_id: id, origin: new URL(url).origin, events },
      });
    });
    return { endpoint, secret };
  }

  async get(tenantId: string, orgId: string, id: string) {
    const endpoint = await reposOf(this.deps).webhookEndpoints.find(tenantId, orgId, id);
    if (!endpoint) throw errors.notFound('webhook endpoint not found');
    return endpoint;
  }

  /** A page in id order, after `after` (an organization has at most MAX_ENDPOINTS_PER_ORGANIZATION). */
  async list(tenantId: string, orgId: string, after: string | undefined, limit: number) {
    const all = await reposOf(this.deps).webhookEndpoints.listByOrganization(tenantId, orgId);
    return all.filter((e) => after === undefined || e.id > after).slice(0, limit);
  }

  async delete(tenantId: string, actor: Actor, orgId: string, id: string): Promise<void> {
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      if (!(await reposOf(this.deps, trx).webhookEndpoints.delete(tenantId, orgId, id))) throw errors.notFound('webhook endpoint not found');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'webhook_endpoint.deleted',
        organizationId: orgId,
        actor,
        data: { endpoint_id: id },
      });
    });
  }

  async deliveries(tenantId: string, orgId: string, endpointId: string, q: { status?: DeliveryStatus; after?: string; limit: number }) {
    await this.get(tenantId, orgId, endpointId);
    const repo = reposOf(this.deps).webhookDeliveries;
    const rows = await repo.list({ tenantId, endpointId, ...q });
    const attempts = await repo.attemptsOf(rows.map((r) => r.id));
    return rows.map((d) => ({ delivery: d, attempts: attempts.filter((a) => a.deliveryId === d.id) }));
  }

  /** Replays a finished delivery: one new attempt now, same webhook-id, same body. */
  async retry(tenantId: string, orgId: string, endpointId: string, deliveryId: string) {
    await this.get(tenantId, orgId, endpointId);
    const repo = reposOf(this.deps).webhookDeliveries;
    const d = await repo.scheduleRetry(tenantId, endpointId, deliveryId, this.deps.clock.now());
    if (d) return d;
    if (await repo.find(tenantId, endpointId, deliveryId)) throw errors.conflict('the delivery is pending or in flight; it will be attempted on schedule');
    throw errors.notFound('delivery not found');
  }
}
