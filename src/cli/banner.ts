import type { CreatedTenant } from '../tenants/service.js';

/** The first-start message: the new tenant, its API key (shown this once) and next steps. */
export function newcomerBanner(created: CreatedTenant, port: number): string {
  const { tenant, platformApiKey } = created;
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
