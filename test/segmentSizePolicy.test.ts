import { describe, expect, it } from 'vitest';
import { DEFAULT_SEGMENT_DOCS, TARGET_SEGMENTS, defaultSegmentDocs, maxSegmentDocs } from '../segments/index/segmentSizePolicy.js';
import { PACKED_NIBBLE } from '../segments/quantized/ScalarEncodings.js';

describe('default segment size', () => {
  it('is the fixed default up to TARGET_SEGMENTS such segments, and when the count is unknown (JSONL)', () => {
    expect(defaultSegmentDocs(1000, 1024)).toBe(DEFAULT_SEGMENT_DOCS);
    expect(defaultSegmentDocs(1_000_000, 1024)).toBe(DEFAULT_SEGMENT_DOCS);
    expect(defaultSegmentDocs(DEFAULT_SEGMENT_DOCS * TARGET_SEGMENTS, 1024)).toBe(DEFAULT_SEGMENT_DOCS);
    expect(defaultSegmentDocs(undefined, 1024)).toBe(DEFAULT_SEGMENT_DOCS);
  });

  it('grows with N above that, so the segment count (and the first phase per query) stays put', () => {
    expect(defaultSegmentDocs(5_000_000, 1024)).toBe(625_000);
    for (const n of [2_000_000, 5_000_000, 10_000_000, 25_000_000]) {
      const docs = defaultSegmentDocs(n, 768);
      expect(Math.ceil(n / docs)).toBe(TARGET_SEGMENTS);
    }
  });

  it('never exceeds what one worker can build in its 4 GiB wasm memory, nor what one arena holds', () => {
    // Building: 1-bit record (codeBytes + 16) + 4-bit query record (4 codeBytes + 16) per doc.
    expect(maxSegmentDocs(1024)).toBe(Math.floor((3.5 * 2 ** 30) / (128 + 16 + 512 + 16)));
    // Few dims: the served record + level-0 list dominates.
    expect(maxSegmentDocs(64)).toBe(Math.floor((3.5 * 2 ** 30) / (8 + 16 + 160)));
    expect(defaultSegmentDocs(100_000_000, 1024)).toBe(maxSegmentDocs(1024));
    expect(defaultSegmentDocs(100_000_000, 4096)).toBe(maxSegmentDocs(4096));
    expect(maxSegmentDocs(4096)).toBeLessThan(maxSegmentDocs(1024));
  });

  it('sizes the limit by the codes: 4-bit records of 512 + 16 bytes and query records of 1024 + 16 at 1024 dims', () => {
    expect(maxSegmentDocs(1024, PACKED_NIBBLE)).toBe(Math.floor((3.5 * 2 ** 30) / (512 + 16 + 1024 + 16)));
    expect(defaultSegmentDocs(100_000_000, 1024, PACKED_NIBBLE)).toBe(maxSegmentDocs(1024, PACKED_NIBBLE));
    expect(defaultSegmentDocs(5_000_000, 1024, PACKED_NIBBLE)).toBe(625_000);
  });
});
