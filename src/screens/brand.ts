/** Organization branding of the hosted pages, validated before it reaches HTML or CSS. */
import type { OrganizationRecord } from '../storage/repos/organizations.js';

export interface Brand {
  displayName: string;
  /** An https URL, or null. */
  logoUrl: string | null;
  /** `#rgb` or `#rrggbb`. */
  primaryColor: string;
}

export const DEFAULT_BRAND: Brand = { displayName: 'Keyhall', logoUrl: null, primaryColor: '#2f5bea' };

const COLOR = /^#(?:[0-9a-fA-F]{3}){1,2}$/;

function httpsUrl(value: string | null): string | null {
  if (!value) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'https:' && !u.username && !u.password ? u.toString() : null;
  } catch {
    return null;
  }
}

export function brandOf(org: OrganizationRecord | undefined): Brand {
  if (!org) return DEFAULT_BRAND;
  return {
    displayName: org.brandDisplayName?.trim() || org.name,
    logoUrl: httpsUrl(org.brandLogoUrl),
    primaryColor: org.brandPrimaryColor && COLOR.test(org.brandPrimaryColor) ? org.brandPrimaryColor : DEFAULT_BRAND.primaryColor,
  };
}
