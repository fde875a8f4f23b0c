import { describe, expect, it } from 'vitest';
import { BloomFilter } from '../segments/util/BloomFilter.js';

/** The filter in front of a segment's `_id` terms: never a false "absent", rarely a false "present". */
describe('BloomFilter', () => {
  const encoder = new TextEncoder();
  const ids = Array.from({ length: 20_000 }, (_, i) => (i % 5 === 0 ? `übung-${i}-日本` : `doc-${i}`));

  it('finds every id it was given as UTF-8 bytes, asked as a string, ASCII or not', () => {
    const filter = new BloomFilter(ids.length);
    // Terms come out of a dictionary as views into a larger buffer.
    const buffer = new Uint8Array(64);
    for (const id of ids) {
      const bytes = encoder.encode(id);
      buffer.set(bytes);
      filter.addBytes(buffer, bytes.length);
    }
    for (const id of ids) expect(filter.mayContain(id)).toBe(true);
  });

  it('says "absent" for about 99% of ids it was not given, with 10 bits per id', () => {
    const filter = new BloomFilter(ids.length);
    for (const id of ids) filter.addBytes(encoder.encode(id));
    let falsePositives = 0;
    for (let i = 0; i < 20_000; i++) if (filter.mayContain(`other-${i}`)) falsePositives++;
    expect(falsePositives / 20_000).toBeLessThan(0.02);
    expect(filter.bytes).toBeLessThanOrEqual((2 * 10 * ids.length) / 8);
  });

  it('an empty filter contains nothing', () => {
    const filter = new BloomFilter(0);
    expect(filter.mayContain('')).toBe(false);
    expect(filter.mayContain('a')).toBe(false);
  });
});
