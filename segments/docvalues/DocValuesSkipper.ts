import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { NO_MORE_DOCS } from '../lucene/IndexedDISIIterator.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import type { SkipperEntry } from './DocValuesEntries.js';
import { SKIP_INDEX_MAX_LEVEL, SKIP_INDEX_RECORD_BYTES } from './Lucene90DocValuesFormat.js';

/**
 * Lucene's DocValuesSkipper over a field's skip index (layout in Lucene90DocValuesFormat.ts): the
 * min / max value and doc range of runs of ~4096 docs (level 0) and of 8, 64 and 512 such runs
 * (levels 1-3), so a range filter can accept or reject whole runs without reading values. Global
 * bounds come from `.dvm`; `advance(target)` walks the intervals forward, skipping whole level-L
 * groups whose max doc is below the target. Values are the field's longs (ords for sorted types).
 */
export class DocValuesSkipper {
  private readonly minDoc = new Int32Array(SKIP_INDEX_MAX_LEVEL).fill(-1);
  private readonly maxDoc = new Int32Array(SKIP_INDEX_MAX_LEVEL).fill(-1);
  private readonly minVal = new BigInt64Array(SKIP_INDEX_MAX_LEVEL);
  private readonly maxVal = new BigInt64Array(SKIP_INDEX_MAX_LEVEL);
  private readonly count = new Int32Array(SKIP_INDEX_MAX_LEVEL);
  private levels = 1;
  /** Next unread byte of the skip index. */
  private pos: number;
  private readonly end: number;

  constructor(
    private readonly entry: SkipperEntry,
    private readonly bytes: RandomAccessBytes,
  ) {
    this.pos = entry.offset;
    this.end = entry.offset + entry.length;
  }

  /** Moves to the first interval whose max doc is >= target (all NO_MORE_DOCS past the last). */
  advance(target: number): void {
    if (target > this.entry.maxDocId) {
      this.minDoc.fill(NO_MORE_DOCS);
      this.maxDoc.fill(NO_MORE_DOCS);
      return;
    }
    if (target <= this.maxDoc[0]) throw new RangeError(`target ${target} must be past the current interval (max doc ${this.maxDoc[0]})`);
    for (;;) {
      if (this.pos >= this.end) throw new CorruptIndexException(`skip index ends before doc ${target} (max doc ${this.entry.maxDocId})`, this.bytes.name);
      const levels = this.byte(this.pos++);
      if (levels < 1 || levels > SKIP_INDEX_MAX_LEVEL) throw new CorruptIndexException(`skip index: ${levels} levels at ${this.pos - 1}`, this.bytes.name);
      this.levels = levels;
      let valid = true;
      // Records run from the top level down; a level-L group that ends before the target is
      // skipped whole: its remaining records and every interval under it.
      for (let level = levels - 1; level >= 0; level--) {
        const p = this.bytes.load(this.pos, SKIP_INDEX_RECORD_BYTES);
        const view = new DataView(this.bytes.bytes.buffer, this.bytes.bytes.byteOffset + p, SKIP_INDEX_RECORD_BYTES);
        this.maxDoc[level] = view.getInt32(0, true);
        if (this.maxDoc[level] < target) {
          this.pos += 4 + jumpLength(level);
          valid = false;
          break;
        }
        this.minDoc[level] = view.getInt32(4, true);
        this.maxVal[level] = view.getBigInt64(8, true);
        this.minVal[level] = view.getBigInt64(16, true);
        this.count[level] = view.getInt32(24, true);
        this.pos += SKIP_INDEX_RECORD_BYTES;
      }
      if (valid) {
        while (this.levels < SKIP_INDEX_MAX_LEVEL && this.maxDoc[this.levels] >= target) this.levels++;
        return;
      }
    }
  }

  numLevels(): number {
    return this.levels;
  }
  minDocID(level: number): number {
    return this.minDoc[level];
  }
  maxDocID(level: number): number {
    return this.maxDoc[level];
  }
  minValue(level?: number): bigint {
    return level === undefined ? this.entry.minValue : this.minVal[level];
  }
  maxValue(level?: number): bigint {
    return level === undefined ? this.entry.maxValue : this.maxVal[level];
  }
  /** Docs with a value in the level's interval, or in the whole field without a level. */
  docCount(level?: number): number {
    return level === undefined ? this.entry.docCount : this.count[level];
  }
  /** The most values one doc has (-1: unknown, files before version 2 of multi-valued fields). */
  maxValueCount(): number {
    return this.entry.maxValueCount;
  }

  private byte(at: number): number {
    return this.bytes.bytes[this.bytes.load(at, 1)];
  }
}

/**
 * Bytes from right after a level-L record's maxDocID to the interval after the level-L group: the
 * group is 8^L intervals, each a levels byte plus one record per level it carries, 8^L + 8^(L-1) +
 * ... + 1 records in all; 5 of its bytes (levels byte, maxDocID) are already read.
 */
function jumpLength(level: number): number {
  let records = 0;
  for (let l = 0; l <= level; l++) records += 1 << (3 * l);
  return (1 << (3 * level)) + records * SKIP_INDEX_RECORD_BYTES - 5;
}
