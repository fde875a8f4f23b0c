import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { decodePacked, packedSpan, readPackedAt, readPackedBigIntAt } from '../packed/DirectReader.js';
import { isSupportedBitsPerValue } from '../packed/DirectWriter.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import type { NumericEntry } from './DocValuesEntries.js';

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Values decoded per read in bulk: a multiple of 8, so every chunk starts on a byte. */
const CHUNK = 8192;

interface Block {
  /** Width of the block's packed values; 0: every value is the block's min. */
  readonly bpv: number;
  readonly min: bigint;
  /** `.dvd` offset of the block's packed values. */
  readonly dataOffset: number;
  readonly count: number;
}

/**
 * The values of a NumericEntry (Lucene90DocValuesFormat.ts), by index, read in place from `.dvd`:
 * constant, table, delta / GCD (value = min + gcd x packed, wrapping in int64), or blocks of 2^14
 * values each with its own width and min.
 *
 * Values are int64. `get` is always exact (a bigint). The number paths (`getNumber`,
 * `decodeNumbers`) exist for the common case where the encoding proves every value a safe
 * integer (|v| <= 2^53 - 1): `safe` says so, decided from `.dvm` alone (table entries, or
 * min + gcd x (2^bitsPerValue - 1) per block). A field that may hold larger values takes the bigint
 * paths; nothing is ever rounded.
 */
export class NumericValues {
  readonly safe: boolean;
  private readonly blocks: readonly Block[];
  private readonly shift: number;
  private readonly tableNumbers: Float64Array | null;
  private readonly gcdNumber: number;

  constructor(
    readonly entry: NumericEntry,
    private readonly data: RandomAccessBytes,
  ) {
    const corrupt = (msg: string) => new CorruptIndexException(msg, data.name);
    const e = entry;
    this.gcdNumber = Number(e.gcd);
    if (e.blockShift >= 0) {
      this.shift = e.blockShift;
      const blockSize = 2 ** e.blockShift;
      const n = Math.ceil(e.numValues / blockSize);
      const p = data.load(e.valueJumpTableOffset, 8 * n);
      const view = new DataView(data.bytes.buffer, data.bytes.byteOffset + p, 8 * n);
      const offsets: number[] = [];
      for (let b = 0; b < n; b++) offsets.push(Number(view.getBigInt64(8 * b, true)));
      const blocks: Block[] = [];
      for (let b = 0; b < n; b++) {
        const at = offsets[b];
        const end = e.valuesOffset + e.valuesLength;
        if (!(at >= e.valuesOffset && at + 9 <= end)) throw corrupt(`value block ${b} at ${at} lies outside the values [${e.valuesOffset}, ${end})`);
        const q = data.load(at, 9);
        const bpv = data.bytes[q];
        const min = new DataView(data.bytes.buffer, data.bytes.byteOffset + q + 1, 8).getBigInt64(0, true);
        const count = Math.min(blockSize, e.numValues - b * blockSize);
        if (bpv === 0) {
          blocks.push({ bpv, min, dataOffset: at + 9, count });
          continue;
        }
        if (!isSupportedBitsPerValue(bpv)) throw corrupt(`value block ${b}: invalid bitsPerValue ${bpv}`);
        if (at + 13 > end) throw corrupt(`value block ${b} at ${at} lies outside the values`);
        const r = data.load(at + 9, 4);
        const length = new DataView(data.bytes.buffer, data.bytes.byteOffset + r, 4).getInt32(0, true);
        if (length < Math.ceil((count * bpv) / 8) || at + 13 + length > end) throw corrupt(`value block ${b}: ${length} bytes for ${count} values of ${bpv} bits`);
        blocks.push({ bpv, min, dataOffset: at + 13, count });
      }
      this.blocks = blocks;
    } else {
      this.shift = 30;
      this.blocks = [{ bpv: e.bitsPerValue, min: e.minValue, dataOffset: e.valuesOffset, count: e.numValues }];
    }
    if (e.numValues === 0) {
      this.tableNumbers = null;
      this.safe = true; // nothing to decode (an empty field records min = Long.MAX_VALUE)
    } else if (e.table !== null) {
      this.tableNumbers = Float64Array.from(e.table, Number);
      this.safe = e.table.every((v) => v >= -SAFE && v <= SAFE);
    } else {
      this.tableNumbers = null;
      this.safe = this.blocks.every((b) => {
        if (b.min < -SAFE || b.min > SAFE) return false;
        if (b.bpv === 0) return true;
        const span = e.gcd * ((1n << BigInt(b.bpv)) - 1n);
        return span <= SAFE && b.min + span <= SAFE;
      });
    }
  }

  get size(): number {
    return this.entry.numValues;
  }

  /** The value at `index`, exactly. */
  get(index: number): bigint {
    const { block, packed } = this.locate(index, true);
    if (this.entry.table !== null) return this.entry.table[this.tableIndex(Number(packed))];
    if (block.bpv === 0) return block.min;
    return BigInt.asIntN(64, block.min + this.entry.gcd * (packed as bigint));
  }

  /** The value at `index` as a number; only for a `safe` field. */
  getNumber(index: number): number {
    if (!this.safe) throw new RangeError(`${this.data.name}: values may exceed 2^53; read them as bigints`);
    const { block, packed } = this.locate(index, false);
    if (this.tableNumbers !== null) return this.tableNumbers[this.tableIndex(packed as number)];
    if (block.bpv === 0) return Number(block.min);
    return Number(block.min) + this.gcdNumber * (packed as number);
  }

  private tableIndex(packed: number): number {
    if (packed >= this.entry.table!.length) throw new CorruptIndexException(`table index ${packed} beyond the ${this.entry.table!.length}-entry table`, this.data.name);
    return packed;
  }

  private locate(index: number, big: boolean): { block: Block; packed: number | bigint } {
    if (!(index >= 0 && index < this.entry.numValues)) throw new RangeError(`value index ${index} out of [0, ${this.entry.numValues})`);
    const b = this.blocks.length === 1 ? 0 : Math.floor(index / 2 ** this.shift);
    const block = this.blocks[b];
    if (block.bpv === 0) return { block, packed: 0 };
    const j = this.blocks.length === 1 ? index : index - b * 2 ** this.shift;
    const bit = j * block.bpv;
    const shift = bit & 7;
    const p = this.data.load(block.dataOffset + Math.floor(bit / 8), packedSpan(shift, block.bpv));
    const packed = big || block.bpv > 48 ? readPackedBigIntAt(this.data.bytes, p, shift, block.bpv) : readPackedAt(this.data.bytes, p, shift, block.bpv);
    return { block, packed: big ? packed : Number(packed) };
  }

  /**
   * Every value, in index order, as numbers (`safe` fields). An Int32Array output is for values
   * known to fit in 32 bits (ords, which are below the terms count).
   */
  decodeNumbers<T extends Float64Array | Int32Array = Float64Array>(out: T = new Float64Array(this.entry.numValues) as T, outOffset = 0): T {
    if (!this.safe) throw new RangeError(`${this.data.name}: values may exceed 2^53; decode them as bigints`);
    const table = this.tableNumbers;
    const gcd = this.gcdNumber;
    let o = outOffset;
    for (const block of this.blocks) {
      const min = Number(block.min);
      if (block.bpv === 0) {
        out.fill(min, o, o + block.count);
        o += block.count;
        continue;
      }
      for (let done = 0; done < block.count; done += CHUNK) {
        const count = Math.min(CHUNK, block.count - done);
        const p = this.data.load(block.dataOffset + (done * block.bpv) / 8, Math.ceil((count * block.bpv) / 8));
        decodePacked(this.data.bytes, p, block.bpv, count, out, o);
        const end = o + count;
        if (table !== null) for (let i = o; i < end; i++) out[i] = table[this.tableIndex(out[i])];
        else if (gcd === 1) {
          if (min !== 0) for (let i = o; i < end; i++) out[i] += min;
        } else for (let i = o; i < end; i++) out[i] = min + gcd * out[i];
        o = end;
      }
    }
    return out;
  }

  /**
   * Every value, in index order, exactly, into a BigInt64Array. Decoded as pairs of 32-bit words
   * (min + gcd x packed with 64-bit wrap-around done in 32-bit halves), so no bigint is created
   * per value; the same bytes read as a Float64Array are the doubles whose raw bits were stored.
   */
  decodeBigInts(out: BigInt64Array = new BigInt64Array(this.entry.numValues), outOffset = 0): BigInt64Array {
    if (out.length - outOffset < this.entry.numValues) throw new RangeError(`output of ${out.length - outOffset} for ${this.entry.numValues} values`);
    const words = new Uint32Array(out.buffer, out.byteOffset + 8 * outOffset, 2 * this.entry.numValues);
    const table = this.entry.table === null ? null : new Uint32Array(this.entry.table.buffer, this.entry.table.byteOffset, 2 * this.entry.table.length);
    const [glo, ghi] = halves(this.entry.gcd);
    const gcdOne = this.entry.gcd === 1n;
    let o = 0;
    for (const block of this.blocks) {
      const [mlo, mhi] = halves(block.min);
      if (block.bpv === 0) {
        for (let end = o + block.count; o < end; o++) {
          words[2 * o] = mlo;
          words[2 * o + 1] = mhi;
        }
        continue;
      }
      const bpv = block.bpv;
      for (let done = 0; done < block.count; done += CHUNK) {
        const count = Math.min(CHUNK, block.count - done);
        const base = this.data.load(block.dataOffset + (done * bpv) / 8, Math.ceil((count * bpv) / 8));
        const b = this.data.bytes;
        for (let i = 0; i < count; i++, o++) {
          let plo: number;
          let phi = 0;
          if (bpv <= 32) {
            const bit = i * bpv;
            plo = readPackedAt(b, base + Math.floor(bit / 8), bit & 7, bpv);
          } else {
            const q = base + i * (bpv >>> 3);
            plo = (b[q] | (b[q + 1] << 8) | (b[q + 2] << 16) | (b[q + 3] << 24)) >>> 0;
            for (let k = (bpv >>> 3) - 1; k >= 4; k--) phi = phi * 256 + b[q + k];
          }
          if (table !== null) {
            const t = this.tableIndex(plo) * 2;
            words[2 * o] = table[t];
            words[2 * o + 1] = table[t + 1];
            continue;
          }
          let lo = plo;
          let hi = phi;
          if (!gcdOne) {
            // (glo + ghi 2^32)(plo + phi 2^32) mod 2^64 = glo plo + 2^32 (glo phi + ghi plo)
            lo = Math.imul(glo, plo) >>> 0;
            hi = (mulHigh32(glo, plo) + Math.imul(glo, phi) + Math.imul(ghi, plo)) >>> 0;
          }
          const sum = lo + mlo;
          words[2 * o] = sum >>> 0;
          words[2 * o + 1] = (hi + mhi + (sum > 0xffffffff ? 1 : 0)) >>> 0;
        }
      }
    }
    return out;
  }
}

/** The low and high 32 bits of an int64's two's-complement pattern. */
function halves(v: bigint): [number, number] {
  const u = BigInt.asUintN(64, v);
  return [Number(u & 0xffffffffn), Number(u >> 32n)];
}

/** The high 32 bits of the 64-bit product of two uint32s (16-bit limbs keep every step exact). */
function mulHigh32(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const m1 = a1 * b0;
  const m2 = a0 * b1;
  const mid = ((a0 * b0) >>> 16) + (m1 & 0xffff) + (m2 & 0xffff);
  return (a1 * b1 + Math.floor(m1 / 65536) + Math.floor(m2 / 65536) + Math.floor(mid / 65536)) >>> 0;
}
