/**
 * A SCIM filter parser (RFC 7644 §3.4.2.2) producing an AST that `sql.ts` turns into SQL.
 * Our own recursive-descent parser rather than scimmy's: scimmy flattens filters into a
 * disjunctive form that mis-handles `not (a or b)` and nested parentheses. Limits keep hostile
 * input cheap: 1000 characters, nesting depth 8, 50 comparisons. Every failure is 400
 * invalidFilter.
 */
import { inspectInput } from '../../kernel/input.js';
import { scimErrors } from '../errors.js';

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
export type Literal = string | number | boolean | null;

export type FilterNode =
  | { kind: 'and' | 'or'; left: FilterNode; right: FilterNode }
  | { kind: 'not'; expr: FilterNode }
  | { kind: 'compare'; path: string; op: CompareOp; value: Literal }
  | { kind: 'present'; path: string }
  /** `emails[type eq "work"]`: `path` is the multi-valued attribute, `filter` applies to its sub-attributes. */
  | { kind: 'valuePath'; path: string; filter: FilterNode };

const MAX_LENGTH = 1000;
const MAX_DEPTH = 8;
const MAX_COMPARISONS = 50;
const COMPARE_OPS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']);

type Token = { t: 'str'; v: string } | { t: 'num'; v: number } | { t: 'word'; v: string } | { t: 'punct'; v: '(' | ')' | '[' | ']' };

const bad = (detail: string) => scimErrors.invalidFilter(detail);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i] as string;
    if (c === ' ' || c === '\t') {
      i++;
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      tokens.push({ t: 'punct', v: c });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let raw = '"';
      for (; j < input.length && input[j] !== '"'; j++) {
        if (input[j] === '\\') raw += input[j++] ?? '';
        raw += input[j] ?? '';
      }
      if (j >= input.length) throw bad('unterminated string in filter');
      let v: string;
      try {
        v = JSON.parse(`${raw}"`) as string;
      } catch {
        throw bad('invalid escape in a filter string');
      }
      // Escapes (`\u0000`, `\ud800`) can produce text the request-wide check never saw and no
      // database stores or compares faithfully (PostgreSQL refuses NUL outright).
      if (inspectInput(v)) throw bad('a filter string contains a NUL character or an unpaired surrogate');
      tokens.push({ t: 'str', v });
      i = j + 1;
    } else {
      const m = /^[A-Za-z0-9_:.$-]+/.exec(input.slice(i));
      if (!m) throw bad(`unexpected character '${c}' in filter`);
      const word = m[0];
      if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(word)) {
        const n = Number(word);
        if (!Number.isFinite(n)) throw bad('number out of range in filter');
        tokens.push({ t: 'num', v: n });
      } else {
        tokens.push({ t: 'word', v: word });
      }
      i += word.length;
    }
  }
  return tokens;
}

const ATTR_PATH = /^(?:urn:[A-Za-z0-9:._-]+:)?[A-Za-z][A-Za-z0-9_$-]*(?:\.[A-Za-z][A-Za-z0-9_$-]*)?$/;

class Parser {
  private pos = 0;
  private comparisons = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): FilterNode {
    const node = this.or(0);
    if (this.pos < this.tokens.length) throw bad('unexpected input after the end of the filter');
    return node;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private isWord(value: string): boolean {
    const t = this.peek();
    return t?.t === 'word' && t.v.toLowerCase() === value;
  }

  private expect(v: '(' | ')' | '[' | ']') {
    const t = this.tokens[this.pos++];
    if (t?.t !== 'punct' || t.v !== v) throw bad(`expected '${v}' in filter`);
  }

  private or(depth: number): FilterNode {
    let left = this.and(depth);
    while (this.isWord('or')) {
      this.pos++;
      left = { kind: 'or', left, right: this.and(depth) };
    }
    return left;
  }

  private and(depth: number): FilterNode {
    let left = this.unary(depth);
    while (this.isWord('and')) {
      this.pos++;
      left = { kind: 'and', left, right: this.unary(depth) };
    }
    return left;
  }

  private unary(depth: number): FilterNode {
    if (depth > MAX_DEPTH) throw bad('filter nested too deeply');
    const t = this.peek();
    if (t?.t === 'word' && t.v.toLowerCase() === 'not') {
      this.pos++;
      this.expect('(');
      const expr = this.or(depth + 1);
      this.expect(')');
      return { kind: 'not', expr };
    }
    if (t?.t === 'punct' && t.v === '(') {
      this.pos++;
      const expr = this.or(depth + 1);
      this.expect(')');
      return expr;
    }
    return this.attrExpr(depth);
  }

  private attrExpr(depth: number): FilterNode {
    const t = this.tokens[this.pos++];
    if (t?.t !== 'word' || !ATTR_PATH.test(t.v)) throw bad('expected an attribute path in filter');
    if (++this.comparisons > MAX_COMPARISONS) throw bad('filter has too many comparisons');
    const path = t.v;
    const next = this.peek();
    if (next?.t === 'punct' && next.v === '[') {
      if (path.includes('.') && !path.startsWith('urn:')) throw bad('a value filter must follow a top-level attribute');
      this.pos++;
      const filter = this.or(depth + 1);
      this.expect(']');
      return { kind: 'valuePath', path, filter };
    }
    const op = this.tokens[this.pos++];
    if (op?.t !== 'word') throw bad(`expected an operator after '${path}'`);
    const opName = op.v.toLowerCase();
    if (opName === 'pr') return { kind: 'present', path };
    if (!COMPARE_OPS.has(opName)) throw bad(`unknown operator '${op.v}'`);
    const v = this.tokens[this.pos++];
    let value: Literal;
    if (v?.t === 'str' || v?.t === 'num') value = v.v;
    else if (v?.t === 'word' && ['true', 'false', 'null'].includes(v.v.toLowerCase())) value = JSON.parse(v.v.toLowerCase()) as Literal;
    else throw bad(`expected a value after '${path} ${op.v}'`);
    return { kind: 'compare', path, op: opName as CompareOp, value };
  }
}

export function parseFilter(input: string): FilterNode {
  if (input.trim() === '') throw bad('the filter is empty');
  if (input.length > MAX_LENGTH) throw bad(`the filter is longer than ${MAX_LENGTH} characters`);
  return new Parser(tokenize(input)).parse();
}
