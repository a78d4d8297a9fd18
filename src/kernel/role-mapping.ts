/**
 * SSO group claims and SCIM groups map to role keys (docs/sso.md, docs/authorization.md). A user in
 * several mapped groups gets one role: `admin`, else the first other role by key, else `member`.
 */
export function pickMappedRole(mapped: Iterable<string>): string | undefined {
  const roles = [...new Set(mapped)];
  if (roles.includes('admin')) return 'admin';
  return roles.filter((r) => r !== 'member').sort()[0] ?? (roles.includes('member') ? 'member' : undefined);
}
