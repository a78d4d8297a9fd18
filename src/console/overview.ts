/**
 * The console overview's exact counts (GET /console/api/overview): one COUNT query each over
 * the tenant's rows, instead of the first page of every list.
 */
import { type ManagementDeps, reposOf } from '../management/common.js';

export interface OverviewCounts {
  organizations: number;
  users: number;
  /** Live (unrevoked) platform-bound API keys; organization keys are not counted. */
  platform_api_keys: number;
  oauth_clients: number;
  webhooks: number;
  /** Webhook endpoints whose latest delivery failed for good (every attempt spent). */
  failing_webhooks: number;
}

export class ConsoleOverview {
  constructor(private readonly deps: ManagementDeps) {}

  async counts(tenantId: string): Promise<OverviewCounts> {
    const r = reposOf(this.deps);
    const organizations = await r.organizations.count(tenantId);
    const users = await r.users.count(tenantId);
    const platformApiKeys = await r.apiKeys.countLivePlatform(tenantId);
    const oauthClients = await r.oauthClients.count(tenantId);
    const webhooks = await r.webhookEndpoints.countWithFailing(tenantId);
    return {
      organizations,
      users,
      platform_api_keys: platformApiKeys,
      oauth_clients: oauthClients,
      webhooks: webhooks.total,
      failing_webhooks: webhooks.failing,
    };
  }
}
