/**
 * The one JSON body reader (the /v1 parser in app.ts and SCIM's): UTF-8 decoded strictly, so a
 * malformed byte sequence is refused instead of being stored as U+FFFD (RFC 8259 §8.1), and a
 * `__proto__` member anywhere is refused by name — JSON.parse keeps it as an own property, but
 * any later `Object.assign` or merge would turn it into a prototype change.
 */
import { fieldPath } from '../kernel/input.js';

export type JsonBody = { ok: true; value: unknown } | { ok: false; problem: 'utf8' | 'syntax' | 'empty' } | { ok: false; problem: 'proto'; path: string };

const FORBIDDEN_KEY = '__proto__';
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

interface Frame {
  value: unknown;
  key: string | number | undefined;
  parent: Frame | undefined;
}

/** `metadata.__proto__`, `items[0].__proto__`: built only once found, so deep bodies stay linear. */
function pathOf(frame: Frame, leaf: string): string {
  const keys: Array<string | number> = [leaf];
  for (let f: Frame | undefined = frame; f && f.key !== undefined; f = f.parent) keys.push(f.key);
  return fieldPath(keys.reverse());
}

/** The path of the first `__proto__` key, walked iteratively (a hostile body cannot exhaust the stack). */
function findProtoKey(root: unknown): string | undefined {
  const stack: Frame[] = [{ value: root, key: undefined, parent: undefined }];
  while (stack.length) {
    const frame = stack.pop()!;
    const { value } = frame;
    if (!value || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: i, parent: frame });
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(value, FORBIDDEN_KEY)) return pathOf(frame, FORBIDDEN_KEY);
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], key: entries[i]![0], parent: frame });
  }
  return undefined;
}

export function readJsonBody(body: Buffer): JsonBody {
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    return { ok: false, problem: 'utf8' };
  }
  if (text.trim() === '') return { ok: false, problem: 'empty' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'syntax' };
  }
  const path = findProtoKey(value);
  return path === undefined ? { ok: true, value } : { ok: false, problem: 'proto', path };
}

/** The client-facing sentence for a refused body. */
export function jsonBodyProblem(result: Exclude<JsonBody, { ok: true }>): string {
  switch (result.problem) {
    case 'utf8':
      return 'the body is not valid UTF-8 (JSON must be sent as UTF-8)';
    case 'empty':
      return 'the body is empty; send a JSON object';
    case 'syntax':
      return 'the body is not valid JSON';
    case 'proto':
      return `${result.path}: "__proto__" is not allowed as a member name`;
  }
}
