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
import { pendingDelivery } from '../../webhooks/schedule.js';
import { newWebhookSecret } from '../../webhooks/signer.js';
import { type ManagementDeps, reposOf } from '../common.js';

export interface WebhookDeps extends ManagementDeps {
  envelope: Envelope;
  egressPolicy: EgressPolicy;
  resolver?: EgressResolver;
  /** Attempts a ping delivery gets (the retry schedule's length, like any delivery). */
  attemptLimit: number;
}

/** The `type` of a test delivery (POST …/ping). Not a catalogue event: never in the feed. */
export const PING_EVENT_TYPE = 'ping';

/** Endpoints per organization: bounds the fan-out of one event. */
export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;

export const endpointView = (e: WebhookEndpointRecord) => ({
  endpoint_id: e.id,
  organization_id: e.organizationId,
  url: e.url,
  events: e.events,
  created_at: new Date(e.createdAt).toISOString(),
  updated_at: new Date(e.updatedAt).toISOString(),
});

/** Omitted or ["*"] means every webhook event type, including ones added later. */
function checkEvents(events: string[] | undefined): string[] {
  if (events === undefined || (events.length === 1 && events[0] === '*')) return ['*'];
  const unknown = events.filter((t) => !WEBHOOK_EVENT_TYPES.includes(t as EventType));
  if (unknown.length) throw errors.invalidRequest(`events: not a webhook event type: ${unknown.join(', ')}`);
  return [...new Set(events)];
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

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
      updatedAt: now,
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

  /**
   * Changes the url (checked against the egress policy exactly as at registration) and the
   * event types. Fields left out keep their value; a change to nothing (`{}`, or the values it
   * already has) writes nothing: no updated_at, no event. The secret never changes.
   */
  async update(tenantId: string, actor: Actor, orgId: string, id: string, input: { url?: string; events?: string[] }): Promise<WebhookEndpointRecord> {
    const current = await this.get(tenantId, orgId, id);
    const events = input.events === undefined ? current.events : checkEvents(input.events);
    const url = input.url === undefined ? current.url : await assertEgressUrl(input.url, this.deps.egressPolicy, { resolver: this.deps.resolver });
    const changed = [...(url !== current.url ? ['url'] : []), ...(!sameSet(events, current.events) ? ['events'] : [])];
    if (changed.length === 0) return current;
    const next: WebhookEndpointRecord = { ...current, url, events, updatedAt: this.deps.clock.now() };
    await this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      if (!(await reposOf(this.deps, trx).webhookEndpoints.update(next))) throw errors.notFound('webhook endpoint not found');
      await this.deps.events.record(trx, {
        tenantId,
        type: 'webhook_endpoint.updated',
        organizationId: orgId,
        actor,
        data: { endpoint_id: id, changed, origin: new URL(url).origin, events },
      });
    });
    return next;
  }

  /**
   * Queues a `ping` delivery to this endpoint only: signed and retried like any delivery, shown
   * in its delivery log. Its envelope has the usual fields; `data` names the endpoint.
   */
  async ping(tenantId: string, orgId: string, endpointId: string) {
    const endpoint = await this.get(tenantId, orgId, endpointId);
    const now = this.deps.clock.now();
    const eventId = newId('evt', now);
    const delivery = {
      id: newId('whd', now),
      tenantId,
      organizationId: orgId,
      endpointId: endpoint.id,
      eventId,
      eventType: PING_EVENT_TYPE,
      body: JSON.stringify({ id: eventId, type: PING_EVENT_TYPE, created: Math.floor(now / 1000), organization_id: orgId, data: { endpoint_id: endpoint.id } }),
      ...pendingDelivery(now, this.deps.attemptLimit),
    };
    await reposOf(this.deps).webhookDeliveries.insert(delivery);
    return delivery;
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

  /**
   * Retry now: a pending delivery is due now instead of at its scheduled time; a failed or
   * delivered one gets one more attempt, now (a resend: the receiver, which deduplicates on
   * webhook-id, decides what to do with it). Same webhook-id, same body. Only a delivery being
   * attempted at this moment is a conflict.
   */
  async retry(tenantId: string, orgId: string, endpointId: string, deliveryId: string) {
    await this.get(tenantId, orgId, endpointId);
    const repo = reposOf(this.deps).webhookDeliveries;
    const d = await repo.scheduleRetry(tenantId, endpointId, deliveryId, this.deps.clock.now());
    if (d) return d;
    if (await repo.find(tenantId, endpointId, deliveryId)) throw errors.conflict('the delivery is being attempted right now');
    throw errors.notFound('delivery not found');
  }
}
