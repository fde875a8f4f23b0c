import type { NumericColumn } from './FilterLeaf.js';
import { fillFromCounts, valueCounts } from './MultiValued.js';
import { TWO_53, type NumericValue } from './Values.js';

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

/** Integer sets spanning fewer values than this (or 64 per value, up to MAX_TABLE_SPAN) are tested through a byte table. */
const DENSE_SPAN = 1 << 16;
const MAX_TABLE_SPAN = 1 << 20;

/**
 * A set of numbers tested per doc value. Integers in a compact range (ids, codes, years: the
 * common case) go through a byte table over [min, min + span]: the value's offset from min is
 * clamped to the table (a sentinel 0 past its end), truncated, and checked by reconstruction
 * (`k + min === v`, which also refuses fractions); one load per value, branch-free. Other sets go
 * through an open-addressing hash table over the doubles' IEEE bits in typed arrays (load <= 1/2,
 * linear probing): a hash of two words and a probe or two per value whatever the set's size.
 * Either way -0.0 and +0.0 stay distinct, as in Lucene's order. Longs beyond ±2^53 (exact
 * columns) are looked up by value among the set's bigints.
 */
export class NumericSet {
  /** Distinct doubles, in Lucene's order (sorted; -0 before +0). */
  readonly doubles: Float64Array;
  /** Distinct longs of the set beyond ±2^53 (what an exact long column's large values are tested against). */
  readonly longs: ReadonlySet<bigint>;
  private readonly keys: Uint32Array;
  private readonly used: Uint8Array;
  private readonly mask: number;
  /** 1 at v - tableMin for each integer v of the set (and a 0 sentinel at span + 1), or null. */
  private readonly table: Uint8Array | null = null;
  private readonly tableMin: number = 0;

  constructor(values: readonly NumericValue[]) {
    const doubles: number[] = [];
    const longs = new Set<bigint>();
    for (const v of values) {
      if (typeof v === 'bigint') {
        if (v > -BigInt(TWO_53) && v < BigInt(TWO_53)) doubles.push(Number(v));
        else {
          longs.add(v);
          // A double column holds this long only if it is a double.
          if (BigInt(Number(v)) === v) doubles.push(Number(v));
        }
      } else {
        if (Number.isNaN(v)) throw new RangeError('NaN is not a filter value');
        doubles.push(v);
        if (Number.isInteger(v) && Math.abs(v) >= TWO_53 && Number.isFinite(v)) longs.add(BigInt(v));
      }
    }
    const sorted = Float64Array.from(doubles).sort();
    let n = 0;
    for (let i = 0; i < sorted.length; i++) if (i === 0 || !Object.is(sorted[i], sorted[i - 1])) sorted[n++] = sorted[i];
    this.doubles = sorted.slice(0, n);
    this.longs = longs;
    let capacity = 4;
    while (capacity < 2 * n) capacity *= 2;
    this.mask = capacity - 1;
    this.keys = new Uint32Array(2 * capacity);
    this.used = new Uint8Array(capacity);
    for (let i = 0; i < n; i++) this.add(this.doubles[i]);
    if (n > 0 && longs.size === 0 && this.doubles.every((v) => Number.isInteger(v))) {
      const min = this.doubles[0],
        span = this.doubles[n - 1] - min;
      if (span < Math.min(MAX_TABLE_SPAN, Math.max(DENSE_SPAN, 64 * n))) {
        this.tableMin = min;
        this.table = new Uint8Array(span + 2);
        for (const v of this.doubles) this.table[v - min] = 1;
      }
    }
  }

  /** Whether the double `v` is in the set (bit-exact: -0 is not 0). */
  has(v: number): boolean {
    return probe(this.keys, this.used, this.mask, v) === 1;
  }

  /** The docs of `column` with a value in the set, into `out` (zeroed, `maxDoc` bits; live docs not applied). */
  fill(column: NumericColumn, out: Uint32Array, maxDoc: number): void {
    const { values, offsets } = column;
    const table = this.table;
    // The table answers for a zero whatever its sign: when the set holds exactly one of -0 and +0, zeros are decided by sign.
    const zeros = this.has(-0) === this.has(0) ? NO_ZERO_RULE : this.has(-0) ? NEG_ZERO : POS_ZERO;
    if (offsets === null) {
      if (table !== null) tableSingle(values, table, this.tableMin, zeros, out, maxDoc);
      else {
        const counts = new Int32Array(maxDoc + 1);
        this.count(column, 0, maxDoc, counts);
        for (let w = 0, d = 0; d < maxDoc; w++) {
          let bits = 0;
          for (let i = 0; i < 32 && d < maxDoc; i++, d++) bits |= (counts[d + 1] - counts[d]) << i;
          out[w] = bits;
        }
      }
      if (column.present !== null) {
        const present = column.present;
        for (let w = 0; w < out.length; w++) out[w] &= present[w];
      }
      return;
    }
    const counts = valueCounts(offsets, maxDoc);
    if (table !== null) tableCounts(values, table, this.tableMin, zeros, offsets[0], offsets[maxDoc], counts);
    else this.count(column, offsets[0], offsets[maxDoc], counts);
    fillFromCounts(offsets, counts, out, maxDoc);
  }

  /** Running match counts of values [from, to) through the hash table (exact longs by value). */
  private count(column: NumericColumn, from: number, to: number, counts: Int32Array): void {
    const { keys, used, mask, longs } = this;
    const { values, exactLongs } = column;
    let acc = 0;
    counts[from] = 0;
    for (let j = from; j < to; j++) {
      const v = values[j];
      acc += exactLongs === null || (v > -TWO_53 && v < TWO_53) ? probe(keys, used, mask, v) : +longs.has(exactLongs[j]);
      counts[j + 1] = acc;
    }
  }

  private add(v: number): void {
    f64[0] = v;
    const lo = u32[0],
      hi = u32[1];
    let h = hash(lo, hi) & this.mask;
    while (this.used[h] === 1) {
      if (this.keys[2 * h] === lo && this.keys[2 * h + 1] === hi) return;
      h = (h + 1) & this.mask;
    }
    this.used[h] = 1;
    this.keys[2 * h] = lo;
    this.keys[2 * h + 1] = hi;
  }
}

/** How a table decides zeros: by the table (both or neither zero in the set), or only -0 / only +0 matches. */
const NO_ZERO_RULE = 0,
  NEG_ZERO = 1,
  POS_ZERO = 2;

/** 1 when v is an integer of the table's set (see NumericSet), else 0. */
function tableMatch(v: number, table: Uint8Array, min: number, sentinel: number, zeros: number): number {
  if (zeros !== NO_ZERO_RULE && v === 0) return +(1 / v < 0 === (zeros === NEG_ZERO));
  const x = v - min;
  const k = (x >= 0 && x < sentinel ? x : sentinel) | 0;
  // Reconstruction, not k === x: 5e-324 - (-2) rounds to the integer 2.
  return table[k] & +(k + min === v);
}

function tableSingle(values: Float64Array, table: Uint8Array, min: number, zeros: number, out: Uint32Array, maxDoc: number): void {
  const sentinel = table.length - 1;
  const full = maxDoc >>> 5;
  let d = 0;
  for (let w = 0; w < full; w++, d += 32) {
    let bits = 0;
    for (let i = 0; i < 32; i++) bits |= tableMatch(values[d + i], table, min, sentinel, zeros) << i;
    out[w] = bits;
  }
  if (d < maxDoc) {
    let bits = 0;
    for (let i = 0; d + i < maxDoc; i++) bits |= tableMatch(values[d + i], table, min, sentinel, zeros) << i;
    out[full] = bits;
  }
}

function tableCounts(values: Float64Array, table: Uint8Array, min: number, zeros: number, from: number, to: number, counts: Int32Array): void {
  const sentinel = table.length - 1;
  let acc = 0;
  for (let j = from; j < to; j++) {
    acc += tableMatch(values[j], table, min, sentinel, zeros);
    counts[j + 1] = acc;
  }
}

function hash(lo: number, hi: number): number {
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** 1 when v's bits are a key of the table, else 0. */
function probe(keys: Uint32Array, used: Uint8Array, mask: number, v: number): number {
  f64[0] = v;
  const lo = u32[0],
    hi = u32[1];
  let h = hash(lo, hi) & mask;
  while (used[h] === 1) {
    if (keys[2 * h] === lo && keys[2 * h + 1] === hi) return 1;
    h = (h + 1) & mask;
  }
  return 0;
}
