import { setupLink } from '../console/service.js';
import type { Tenant } from '../kernel/tenancy.js';
import type { CreatedTenant } from '../tenants/service.js';

/** The first-start message: the new tenant, its API key (shown this once) and next steps. */
export function newcomerBanner(created: CreatedTenant, port: number): string {
  const { tenant, platformApiKey, setupToken } = created;
  return [
    '',
    '  Keyhall is running. This empty database now has its first tenant:',
    '',
    `    tenant   ${tenant.id}`,
    `    issuer   ${tenant.issuer}`,
    `    API key  ${platformApiKey}`,
    '',
    '  The API key is shown only this once: store it now.',
    '',
    '  Create the first console administrator (one-time link, valid 24 hours):',
    `    ${setupLink(tenant.issuer, setupToken)}`,
    '',
    '  Next steps:',
    `    curl ${tenant.issuer}/.well-known/openid-configuration`,
    `    curl -X POST ${tenant.issuer}/v1/organizations \\`,
    `      -H "Authorization: Bearer ${platformApiKey}" \\`,
    `      -H 'content-type: application/json' -d '{"name":"Acme"}'`,
    '',
    `  More tenants: npx keyhall tenant create --host auth.example.com (port ${port} here).`,
    '',
  ].join('\n');
}

/**
 * What `serve` prints after it starts: the tenants served and their URLs (each answers only on
 * its own host), and a warning when no tenant can be reached on the port listened on: a
 * database restarted on another port, or an empty one, answers every request `unknown_tenant`.
 * A tenant without an explicit port (`auth.example.com`) is taken to be behind a proxy or on
 * 80/443 and always counts as reachable.
 */
export function servedTenantsNotice(tenants: readonly Tenant[], listen: { host: string; port: number }): { lines: string[]; warning?: string } {
  const address = `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`;
  if (tenants.length === 0) {
    return {
      lines: [],
      warning: `keyhall: listening at ${address} but no tenant exists; every request gets 404 unknown_tenant. Create one: keyhall tenant create --host localhost:${listen.port}`,
    };
  }
  const lines = [`Listening at ${address}; tenants are chosen by the Host header. Serving ${tenants.length} tenant${tenants.length === 1 ? '' : 's'}:`];
  for (const t of tenants) lines.push(`  ${t.id}  ${t.issuer}`);
  const reachable = tenants.some((t) => {
    const port = /:(\d+)$/.exec(t.host)?.[1];
    return port === undefined || Number(port) === listen.port;
  });
  if (reachable) return { lines };
  const hosts = tenants.map((t) => t.host).join(', ');
  return {
    lines,
    warning:
      `keyhall: warning: no tenant is served on port ${listen.port} (tenant hosts: ${hosts}); requests to ${address} get 404 unknown_tenant. ` +
      `Start on the tenant's port (--port) or change its host: keyhall tenant update <id|host> --host <host>:${listen.port}`,
  };
}
