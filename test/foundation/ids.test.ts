import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId, newSecret, randomBase64url } from '../../src/kernel/ids.js';
import { Lru } from '../../src/kernel/lru.js';

describe('ids and tokens from the pooled random buffer', () => {
  it('never repeats across many pool refills, keeps the id shape and time order', () => {
    const seen = new Set<string>();
    let previous = '';
    for (let i = 0; i < 5000; i++) {
      const id = newId('tst', 1_700_000_000_000 + i);
      assert.match(id, /^tst_[0-9a-hjkmnp-tv-z]{26}$/);
      assert.ok(id > previous, 'later ids sort after earlier ones');
      previous = id;
      seen.add(id);
      seen.add(newSecret('sk_'));
      seen.add(randomBase64url(16));
    }
    assert.equal(seen.size, 15000);
  });

  it('hands out fresh bytes of the requested length, whatever the pool offset', () => {
    for (const n of [1, 10, 16, 32, 33, 4096, 8192]) {
      const bytes = Buffer.from(randomBase64url(n), 'base64url');
      assert.equal(bytes.length, n);
      // n random bytes are not all zero (the pool is zeroed as bytes leave it, never reused).
      if (n >= 16) assert.ok(bytes.some((x) => x !== 0));
    }
    assert.throws(() => randomBase64url(8193), RangeError);
  });
});

describe('Lru', () => {
  it('evicts the least recently used entry first and refuses a zero size', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    assert.equal(lru.get('a'), 1);
    lru.set('c', 3);
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.get('c'), 3);
    assert.equal(lru.size, 2);
    lru.delete('a');
    assert.equal(lru.size, 1);
    assert.throws(() => new Lru(0), RangeError);
  });
});

describe('Lru (second chance)', () => {
  it('keeps entries used since the last eviction and never evicts the entry just added', () => {
    const lru = new Lru<string, number>(3);
    for (const k of ['a', 'b', 'c']) lru.set(k, 1);
    lru.get('a');
    lru.get('b');
    lru.get('c');
    lru.set('d', 4); // every older entry was used: one of them goes, not d
    assert.equal(lru.size, 3);
    assert.equal(lru.get('d'), 4);
    lru.set('e', 5); // d was just read; of the others, the walk unmarked them: the oldest goes
    assert.equal(lru.size, 3);
    assert.equal(lru.get('e'), 5);
    assert.equal(lru.get('d'), 4);
  });

  it('protects a hot entry from a burst of cold ones, and updates in place', () => {
    const lru = new Lru<string, number>(4);
    lru.set('hot', 0);
    for (let i = 0; i < 100; i++) {
      assert.equal(lru.get('hot'), 0);
      lru.set(`cold${i}`, i);
    }
    assert.equal(lru.get('hot'), 0);
    assert.equal(lru.size, 4);
    lru.set('hot', 1);
    assert.equal(lru.get('hot'), 1);
    assert.deepEqual(
      [...lru.entries()].find(([k]) => k === 'hot'),
      ['hot', 1],
    );
  });
});
