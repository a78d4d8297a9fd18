/**
 * Back-channel logout, the writing side: when a session ends (every end records
 * `session.revoked`), in that same transaction, the refresh-token families started in the
 * session are revoked (except `offline_access` ones) and one delivery row is written for every
 * client that received tokens in it and registered a `backchannel_logout_uri` (the outbox; the
 * dispatcher sends them). So an ended session and the logout tokens owed for it commit together.
 */
import type { EventListener } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import { newId } from '../kernel/ids.js';
import type { Dialect } from '../storage/db.js';
import { repos } from '../storage/repos/index.js';
import { pendingDelivery, type RetrySchedule } from '../webhooks/schedule.js';

/** Why a session ended (`session.revoked`'s `reason`). */
export const SESSION_END_REASONS = ['logout', 'admin', 'user', 'password_change', 'user_deleted', 'deprovisioned'] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

export function logoutOutbox(clock: Clock, dialect: Dialect, schedule: RetrySchedule): EventListener {
  return async (trx, event) => {
    if (event.type !== 'session.revoked') return;
    const sessionId = event.data.session_id;
    const userId = event.data.user_id;
    if (typeof sessionId !== 'string' || typeof userId !== 'string') return;
    const now = clock.now();
    const { logoutDeliveries } = repos(trx, dialect);
    await logoutDeliveries.revokeSessionFamilies(event.tenantId, sessionId, now);
    for (const client of await logoutDeliveries.sessionClients(event.tenantId, sessionId)) {
      if (!client.backchannelLogoutUri) continue;
      await logoutDeliveries.insert({
        id: newId('lgd', now),
        tenantId: event.tenantId,
        clientId: client.clientId,
        userId,
        sessionId,
        uri: client.backchannelLogoutUri,
        ...pendingDelivery(now, schedule.attemptLimit),
      });
    }
  };
}
