/**
 * `attributes` / `excludedAttributes` (RFC 7644 §3.9) applied to a rendered resource. `id` and
 * `schemas` are always returned. Paths are case-insensitive; `name.givenName` and
 * `urn:…:enterprise:2.0:User:department` select sub-attributes.
 */
import { scimErrors } from './errors.js';

type Json = Record<string, unknown>;

export function parseAttributeList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length > 100 || list.some((p) => !/^(urn:[A-Za-z0-9:._-]+:)?[A-Za-z$][\w$-]*(\.[A-Za-z$][\w$-]*)?$/.test(p))) {
    throw scimErrors.invalidValue('attributes must be a comma-separated list of attribute paths');
  }
  return list;
}

/** Splits a path into [top-level key, sub-attribute?], resolving the URN prefix against the resource. */
function split(path: string, resource: Json, coreSchema: string): [string, string | undefined] {
  const lower = path.toLowerCase();
  const core = `${coreSchema.toLowerCase()}:`;
  if (lower.startsWith(core)) return split(path.slice(core.length), resource, coreSchema);
  if (lower.startsWith('urn:')) {
    const ext = Object.keys(resource).find((k) => k.toLowerCase().startsWith('urn:') && lower.startsWith(`${k.toLowerCase()}:`));
    if (ext) return [ext, path.slice(ext.length + 1)];
    const whole = Object.keys(resource).find((k) => k.toLowerCase() === lower);
    return [whole ?? path, undefined];
  }
  const [top = '', sub] = path.split('.');
  return [top, sub];
}

const keyOf = (o: Json, name: string) => Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());

export function project(resource: Json, coreSchema: string, attributes?: string[], excluded?: string[]): Json {
  if (attributes && attributes.length) {
    const out: Json = { schemas: resource.schemas, id: resource.id };
    for (const path of attributes) {
      const [top, sub] = split(path, resource, coreSchema);
      const key = keyOf(resource, top);
      if (!key) continue;
      const value = resource[key];
      if (sub === undefined || typeof value !== 'object' || value === null) {
        out[key] = value;
      } else if (Array.isArray(value)) {
        out[key] = value.map((item: Json) => {
          const k = keyOf(item, sub);
          return k ? { [k]: item[k] } : {};
        });
      } else {
        const k = keyOf(value as Json, sub);
        if (k) out[key] = { ...((out[key] as Json) ?? {}), [k]: (value as Json)[k] };
      }
    }
    return out;
  }
  if (excluded && excluded.length) {
    const out: Json = structuredClone(resource);
    for (const path of excluded) {
      const [top, sub] = split(path, out, coreSchema);
      const key = keyOf(out, top);
      if (!key || key === 'id' || key === 'schemas') continue;
      const value = out[key];
      if (sub === undefined) delete out[key];
      else if (Array.isArray(value)) value.forEach((item: Json) => delete item[keyOf(item, sub) ?? sub]);
      else if (typeof value === 'object' && value !== null) delete (value as Json)[keyOf(value as Json, sub) ?? sub];
    }
    return out;
  }
  return resource;
}
