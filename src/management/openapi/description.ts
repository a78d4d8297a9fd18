/** The introduction of the /v1 document (info.description, CommonMark). */
export const MANAGEMENT_API_DESCRIPTION = `The management API of a Keyhall tenant: organizations, users, members, API keys, webhooks,
directory sync, OAuth clients and resource servers, and the audit trail.

- **Authentication**: \`Authorization: Bearer sk_live_…\` with an API key. A key is bound to the
  platform (tenant-wide) or to one organization; \`x-keyhall-permission\` on each operation names
  the permission it needs and \`x-keyhall-keys\` which keys may call it (\`platform\`,
  \`organization\`: platform keys and keys bound to that organization, \`any\`).
- **Errors**: every error is \`{"error": "<code>", "error_description": "<text>"}\` with the status
  of its kind (see the shared responses).
- **Lists**: \`?limit=\` and \`?after=<last id>\`; \`next_cursor\` is null on the last page.
- **Requests**: JSON bodies only; unknown fields are refused (400), never ignored.

The OAuth 2.0 / OpenID Connect endpoints are described in \`/openapi/oauth.json\`, and SCIM 2.0
in \`/openapi/scim.json\`.`;
