import type { DataOutput } from '../store/DataOutput.js';
import type { IndexOutput } from '../store/IndexOutput.js';
import { DV_VERSION_SKIPPER_MAX_VALUE_COUNT, LONG_MAX, LONG_MIN, SKIP_INDEX_LEVEL_SHIFT, SKIP_INDEX_MAX_LEVEL } from './Lucene90DocValuesFormat.js';
import type { FieldValues, Long } from './ValueStats.js';

/**
 * Writes a field's skip index into `skip` (`.dvd` for version 0, `.dvs` after) and its
 * SkipIndexMeta into `meta` (layout in Lucene90DocValuesFormat.ts): intervals of at least
 * `intervalSize` docs (extended while a gap-free run of one constant single value goes
 * on), written in runs of up to 8^3 intervals with their level-1..3 summaries.
 */
export function writeSkipIndex(skip: IndexOutput, meta: DataOutput, v: FieldValues, intervalSize: number, version: number): void {
  const start = skip.filePointer;
  let maxValueCount = 0;
  let globalMax: Long = LONG_MIN;
  let globalMin: Long = LONG_MAX;
  let docCount = 0;
  let maxDocId = -1;
  const maxAccumulators = 1 << (SKIP_INDEX_LEVEL_SHIFT * (SKIP_INDEX_MAX_LEVEL - 1));
  let run: Interval[] = [];
  let current: Interval | null = null;
  const close = (acc: Interval) => {
    if (acc.maxValue > globalMax) globalMax = acc.maxValue;
    if (acc.minValue < globalMin) globalMin = acc.minValue;
    docCount += acc.docCount;
    maxDocId = acc.maxDocID;
  };
  let k = 0;
  for (let i = 0; i < v.docs.length; i++) {
    const doc = v.docs[i];
    const count = v.counts === null ? 1 : v.counts[i];
    if (count > maxValueCount) maxValueCount = count;
    const firstValue = v.values[k];
    // (The cast keeps TypeScript from narrowing `current` to its initial null across the loop.)
    const open = current as Interval | null;
    if (open?.isDone(intervalSize, count, firstValue, doc)) {
      close(open);
      current = null;
      if (run.length === maxAccumulators) {
        writeLevels(skip, run);
        run = [];
      }
    }
    if (current === null) {
      current = new Interval(doc);
      run.push(current);
    }
    current.nextDoc(doc);
    for (let j = 0; j < count; j++) current.accumulate(v.values[k++]);
  }
  if (run.length > 0) {
    close(current!);
    writeLevels(skip, run);
  }
  meta.writeLong(start);
  meta.writeLong(skip.filePointer - start);
  meta.writeLong(globalMax);
  meta.writeLong(globalMin);
  meta.writeInt(docCount);
  meta.writeInt(maxDocId);
  if (version >= DV_VERSION_SKIPPER_MAX_VALUE_COUNT) meta.writeInt(maxValueCount);
}

function writeLevels(skip: IndexOutput, run: Interval[]): void {
  const levels: Interval[][] = [run];
  for (let l = 1; l < SKIP_INDEX_MAX_LEVEL; l++) {
    const below = levels[l - 1];
    const merged: Interval[] = [];
    const group = 1 << SKIP_INDEX_LEVEL_SHIFT;
    for (let i = 0; i + group <= below.length; i += group) merged.push(Interval.merge(below.slice(i, i + group)));
    levels.push(merged);
  }
  for (let index = 0; index < run.length; index++) {
    const n = levelsAt(index, run.length);
    skip.writeByte(n);
    for (let level = n - 1; level >= 0; level--) {
      const acc = levels[level][index >> (SKIP_INDEX_LEVEL_SHIFT * level)];
      skip.writeInt(acc.maxDocID);
      skip.writeInt(acc.minDocID);
      skip.writeLong(acc.maxValue);
      skip.writeLong(acc.minValue);
      skip.writeInt(acc.docCount);
    }
  }
}

/** Levels written at interval `index` of a run of `size`: 1 + the highest level whose group starts there and fits. */
function levelsAt(index: number, size: number): number {
  if (index % (1 << SKIP_INDEX_LEVEL_SHIFT) === 0) {
    for (let level = SKIP_INDEX_MAX_LEVEL - 1; level > 0; level--) {
      const n = 1 << (SKIP_INDEX_LEVEL_SHIFT * level);
      if (size - index >= n && index % n === 0) return level + 1;
    }
  }
  return 1;
}

/** Min / max / count of a skip-index interval (or group of intervals). */
class Interval {
  maxDocID = -1;
  docCount = 0;
  minValue: Long = LONG_MAX;
  maxValue: Long = LONG_MIN;
  constructor(readonly minDocID: number) {}

  /** Full once it holds enough docs, unless the next doc continues a gap-free single-valued constant run. */
  isDone(intervalSize: number, valueCount: number, nextValue: Long, nextDoc: number): boolean {
    if (this.docCount < intervalSize) return false;
    return valueCount > 1 || this.minValue !== this.maxValue || this.minValue !== nextValue || this.docCount !== nextDoc - this.minDocID;
  }
  nextDoc(doc: number): void {
    this.maxDocID = doc;
    this.docCount++;
  }
  accumulate(v: Long): void {
    if (v < this.minValue) this.minValue = v;
    if (v > this.maxValue) this.maxValue = v;
  }
  static merge(group: Interval[]): Interval {
    const out = new Interval(group[0].minDocID);
    for (const g of group) {
      out.maxDocID = g.maxDocID;
      out.docCount += g.docCount;
      out.accumulate(g.minValue);
      out.accumulate(g.maxValue);
    }
    return out;
  }
}
