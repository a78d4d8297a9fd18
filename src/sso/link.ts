/**
 * Explicit linking (docs/sso.md, "Linking an account explicitly"): what a signed-in user's
 * /sessions page offers to link and shows as linked, and unlinking. The link itself is the finish
 * of an ordinary SSO round trip (SsoSigninService, `linkUserId` in its continuation).
 */
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { Db } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import { anotherWayLeft, signInWays } from '../users/sign-in-methods.js';

/** At most this many linked connections are listed (and counted for the last-method rule). */
const LINKED_LIMIT = 50;

export interface LinkableConnection {
  connectionId: string;
  connectionName: string;
  organizationName: string;
}

export interface SsoLinks {
  /** The connections the user signs in through (whatever linked them). */
  linked: LinkableConnection[];
  /** Enabled connections the user may link: of the organization that verified their email's domain, or of one they belong to. */
  offered: LinkableConnection[];
}

export type UnlinkResult = 'unlinked' | 'not_linked' | 'last_method';

export interface SsoLinkDeps {
  db: Db;
  clock: Clock;
  events: EventRecorder;
}

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

export class SsoLinkService {
  constructor(private readonly deps: SsoLinkDeps) {}

  #repos() {
    return repos(this.deps.db.kysely, this.deps.db.dialect);
  }

  async links(tenantId: string, userId: string, email: string): Promise<SsoLinks> {
    const r = this.#repos();
    const linked = (await r.ssoIdentities.connectionsOf(tenantId, userId, LINKED_LIMIT)).map((c) => ({
      connectionId: c.connectionId,
      connectionName: c.connectionName,
      organizationName: c.organizationName,
    }));
    const byDomain = await r.organizations.findByVerifiedDomain(tenantId, domainOf(email));
    const memberOf = (await r.members.listByUser(tenantId, userId)).map((m) => m.organizationId);
    const orgIds = [...new Set([...(byDomain ? [byDomain.id] : []), ...memberOf])];
    const offered: LinkableConnection[] = [];
    const already = new Set(linked.map((c) => c.connectionId));
    for (const orgId of orgIds) {
      const org = await r.organizations.find(tenantId, orgId);
      if (!org) continue;
      for (const c of await r.ssoConnections.listByOrganization(tenantId, orgId)) {
        if (c.enabled && !already.has(c.id)) offered.push({ connectionId: c.id, connectionName: c.name, organizationName: org.name });
      }
    }
    return { linked, offered };
  }

  /** Whether the /sessions page offers this connection to this user. */
  async offers(tenantId: string, userId: string, email: string, connectionId: string): Promise<boolean> {
    return (await this.links(tenantId, userId, email)).offered.some((c) => c.connectionId === connectionId);
  }

  /**
   * Removes the user's identities at a connection, recording `sso.identity.unlinked`. Refused
   * (`last_method`) when it is the only way the account signs in: no password, no passkey, no
   * other linked connection and no social identity (src/users/sign-in-methods.ts).
   */
  async unlink(tenantId: string, userId: string, connectionId: string): Promise<UnlinkResult> {
    return this.deps.events.transaction(this.deps.db.kysely, async (trx) => {
      const r = repos(trx, this.deps.db.dialect);
      const linked = await r.ssoIdentities.connectionsOf(tenantId, userId, LINKED_LIMIT);
      const c = linked.find((l) => l.connectionId === connectionId);
      if (!c) return 'not_linked';
      if (!anotherWayLeft(await signInWays(r, tenantId, userId))) return 'last_method';
      await r.ssoIdentities.deleteForUser(tenantId, userId, connectionId);
      await this.deps.events.record(trx, {
        tenantId,
        type: 'sso.identity.unlinked',
        organizationId: c.organizationId,
        actor: { type: 'user', id: userId },
        data: { user_id: userId, connection_id: connectionId },
      });
      return 'unlinked';
    });
  }
}
