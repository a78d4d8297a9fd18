/**
 * Summarises a `node --cpu-prof` profile (bench/profiles/*.cpuprofile): self time by function
 * and by package/folder, the way docs/performance.md reports it.
 * Usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top=30]
 */
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary <file.cpuprofile> [top]');
const p = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
const idle = p.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((a, n) => a + (self.get(n.id) ?? 0), 0);
// Percentages are of the time the process was busy (idle excluded).
const total = [...self.values()].reduce((a, b) => a + b, 0) - idle;
const fn = new Map<string, number>();
const area = new Map<string, number>();
const areaOf = (url: string) => {
  if (!url) return '(native/gc/idle)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const src = /\/(src|dist|bench)\/(.*)\/[^/]+$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return url;
  return url.split('/').slice(-2).join('/');
};
for (const [id, t] of self) {
  const n = byId.get(id)!;
  if (n.callFrame.functionName === '(idle)') continue;
  const name = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  fn.set(name, (fn.get(name) ?? 0) + t);
  const a = areaOf(n.callFrame.url);
  area.set(a, (area.get(a) ?? 0) + t);
}
// Inclusive time of each of our own functions (src/, or dist/ as the bench runs them): how much a
// step costs with what it calls.
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map<string, number>();
for (const [id, t] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    const own = /\/(?:src|dist)\/(.*)$/.exec(n.callFrame.url);
    if (!own || own[1]!.startsWith('console-assets/')) continue;
    const name = `${n.callFrame.functionName || '(anonymous)'} ${own[1]}`;
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + t);
  }
}
const top = Number(topArg ?? 30);
const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
console.log(`${(total / 1e6).toFixed(1)} s busy (idle excluded)`);
console.log('\nself time by function');
for (const [k, v] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
console.log('\ninclusive time of our functions (src/ or dist/)');
for (const [k, v] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
console.log('\nself time by area');
for (const [k, v] of [...area].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${k}`);
