/** Wiring of sign-in (PAR, /authorize, hosted screens, sessions) once per process (used by context.ts). */
import type { Config } from '../config/index.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Clock } from '../kernel/clock.js';
import type { AuthorizeSettings } from '../oauth/authorize/engine.js';
import type { Db } from '../storage/db.js';
import { SigninStoreRepo } from '../storage/repos/signin-store.js';
import { SigninService } from './service.js';

export interface SigninModule {
  store: SigninStoreRepo;
  service: SigninService;
  authorize: AuthorizeSettings;
  parTtlSeconds: number;
}

export function createSigninModule(db: Db, clock: Clock, events: EventRecorder, config: Config): SigninModule {
  const store = new SigninStoreRepo(db.kysely);
  return {
    store,
    service: new SigninService(db, clock, events, {
      sessionIdleSeconds: config.sessionIdleSeconds,
      sessionMaxSeconds: config.sessionMaxSeconds,
      loginMaxFailuresPerAccount: config.loginMaxFailuresPerAccount,
      loginMaxFailuresPerIp: config.loginMaxFailuresPerIp,
      loginFailureWindowSeconds: config.loginFailureWindowSeconds,
    }),
    authorize: { codeTtlSeconds: config.codeTtlSeconds, flowTtlSeconds: config.loginFlowTtlSeconds },
    parTtlSeconds: config.parTtlSeconds,
  };
}
