/**
 * PatchOp messages for Users, validated by scimmy after two adjustments for what identity
 * providers really send:
 * - "True"/"False" strings for `active` and `primary` become booleans (Entra ID);
 * - `add` to `attr[type eq "x"].sub` when no `attr` element of that type exists yet creates the
 *   element `{type: "x", sub: value}` (Entra ID adds a work email or address this way). A
 *   `replace` with a filter that matches nothing stays 400 noTarget, as RFC 7644 §3.5.2.3 says.
 */
import SCIMMY from 'scimmy';
import { inspectInput } from '../kernel/input.js';
import { fromScimmy, scimErrors } from './errors.js';
import { normalizeBooleans } from './resources.js';

type Json = Record<string, unknown>;
type Operation = { op?: unknown; path?: unknown; value?: unknown };

const TYPE_FILTER = /^([A-Za-z][\w$-]*)\[\s*type\s+eq\s+"([^"\\]*)"\s*\]\.([A-Za-z][\w$-]*)$/i;

const PATH_STRING = /"((?:[^"\\]|\\.)*)"/g;

/**
 * Cheap shape checks before the transaction (the full validation needs the current resource).
 * A string literal in a path's value filter (`emails[value eq "\u0000"]`) must not unescape to
 * a NUL or an unpaired surrogate, text the request-wide check never saw: 400 invalidPath.
 */
export function checkPatchBody(body: unknown): asserts body is { Operations?: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw scimErrors.invalidSyntax('the body must be a PatchOp object');
  const ops = (body as { Operations?: unknown }).Operations;
  if (!Array.isArray(ops)) return;
  ops.forEach((raw: unknown, i) => {
    const path = typeof raw === 'object' && raw !== null ? (raw as Operation).path : undefined;
    if (typeof path !== 'string' || !path.includes('\\')) return;
    for (const [, literal = ''] of path.matchAll(PATH_STRING)) {
      let text: unknown;
      try {
        text = JSON.parse(`"${literal}"`);
      } catch {
        throw scimErrors.invalidPath(`operation ${i + 1}: invalid escape in a path filter`);
      }
      if (inspectInput(text)) throw scimErrors.invalidPath(`operation ${i + 1}: a path filter string contains a NUL character or an unpaired surrogate`);
    }
  });
}

function adjust(ops: unknown[], resource: Json): unknown[] {
  const created = new Set<string>();
  return ops.map((raw) => {
    if (typeof raw !== 'object' || raw === null) return raw;
    const op = raw as Operation;
    const path = typeof op.path === 'string' ? op.path : undefined;
    let value = normalizeBooleans(op.value);
    if (path && /^(active|.*\.primary)$/i.test(path) && typeof value === 'string' && /^(true|false)$/i.test(value)) value = value.toLowerCase() === 'true';
    const m = path && typeof op.op === 'string' && op.op.toLowerCase() === 'add' ? TYPE_FILTER.exec(path) : null;
    if (m) {
      const [, attr = '', type = '', sub = ''] = m;
      const key = Object.keys(resource).find((k) => k.toLowerCase() === attr.toLowerCase()) ?? attr;
      const list = Array.isArray(resource[key]) ? (resource[key] as Json[]) : [];
      const marker = `${attr.toLowerCase()}|${type.toLowerCase()}`;
      const exists = created.has(marker) || list.some((e) => typeof e.type === 'string' && e.type.toLowerCase() === type.toLowerCase());
      if (!exists) {
        created.add(marker);
        return { ...op, path: attr, value: [{ type, [sub]: value }] };
      }
    }
    return { ...op, value };
  });
}

export function patchMessage(body: { Operations?: unknown }, resource: Json): InstanceType<typeof SCIMMY.Messages.PatchOp> {
  const ops = body.Operations;
  const Operations = Array.isArray(ops) ? adjust(ops, resource) : ops;
  try {
    return new SCIMMY.Messages.PatchOp({ ...body, Operations } as ConstructorParameters<typeof SCIMMY.Messages.PatchOp>[0]);
  } catch (err) {
    throw fromScimmy(err) ?? scimErrors.invalidSyntax(err instanceof Error ? err.message : 'invalid PatchOp');
  }
}
