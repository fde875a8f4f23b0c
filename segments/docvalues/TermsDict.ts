import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { decompress } from '../compress/LZ4.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import type { TermsDictEntry } from './DocValuesEntries.js';
import { TERMS_DICT_BLOCK_LZ4_SHIFT } from './Lucene90DocValuesFormat.js';
import { MonotonicValues } from './MonotonicValues.js';

/** Room after a decompressed block, so a block that decodes a little long is caught, not overrun. */
const BLOCK_PADDING = 7;
const BLOCK_MASK = (1 << TERMS_DICT_BLOCK_LZ4_SHIFT) - 1;

/** Unsigned byte order, Lucene's BytesRef.compareTo. */
export function compareBytes(a: Uint8Array, aLen: number, b: Uint8Array, bLen: number): number {
  const n = Math.min(aLen, bLen);
  for (let i = 0; i < n; i++) {
    const d = a[i] - b[i];
    if (d !== 0) return d;
  }
  return aLen - bLen;
}

/**
 * The terms dictionary of a SORTED / SORTED_SET field (layout in Lucene90DocValuesFormat.ts), read
 * in place: ord -> term decompresses the one 64-term block holding the ord (consecutive ords of a
 * block reuse it); term -> ord binary-searches the reverse index (every 1024th term's distinguishing
 * prefix), then the plain first terms of the 16 blocks under it, then scans one block.
 *
 * A cursor, like Lucene's TermsDict: one instance per user at a time, and `lookupOrd` returns a
 * view of its term buffer that the next call overwrites (copy it to keep it). Its memory is that
 * buffer and one decompressed block (maxTermLength + maxBlockLength bytes).
 */
export class TermsDict {
  readonly valueCount: number;
  private readonly blockAddresses: MonotonicValues;
  private readonly indexAddresses: MonotonicValues;
  private readonly term: Uint8Array;
  private termLength = 0;
  private readonly block: Uint8Array;
  /** The decompressed part of the current block: [blockPos, blockEnd) of `block`. */
  private blockPos = 0;
  private blockEnd = 0;
  private currentBlock = -1;
  private ord = -1;
  private readonly indexTerms: number;
  /** File offset right after the last readVInt, and buffer position right after the last vint. */
  private vintEnd = 0;
  private afterVInt = 0;

  constructor(
    private readonly entry: TermsDictEntry,
    private readonly data: RandomAccessBytes,
  ) {
    this.valueCount = entry.valueCount;
    this.blockAddresses = new MonotonicValues(entry.blockAddresses, data);
    this.indexAddresses = new MonotonicValues(entry.indexAddresses, data);
    this.term = new Uint8Array(entry.maxTermLength);
    this.block = new Uint8Array(entry.maxTermLength + entry.maxBlockLength + BLOCK_PADDING);
    this.indexTerms = entry.valueCount === 0 ? 0 : Math.floor((entry.valueCount - 1) / 2 ** entry.indexShift) + 1;
  }

  /** The term of `ord` (a view valid until the next call on this dictionary). */
  lookupOrd(ord: number): Uint8Array {
    if (!(Number.isInteger(ord) && ord >= 0 && ord < this.valueCount)) throw new RangeError(`ord ${ord} out of [0, ${this.valueCount})`);
    const block = Math.floor(ord / (BLOCK_MASK + 1));
    if (ord < this.ord || block !== this.currentBlock) this.loadBlock(block);
    while (this.ord < ord) this.nextInBlock();
    return this.term.subarray(0, this.termLength);
  }

  /**
   * The ord of `key` when present; otherwise -1 - (the ord it would be inserted at), as Lucene's
   * lookupTerm: -1 - valueCount past the last term.
   */
  lookupTerm(key: Uint8Array | string): number {
    const k = typeof key === 'string' ? new TextEncoder().encode(key) : key;
    if (this.valueCount === 0) return -1;
    // The last reverse-index entry whose prefix is <= key. Entry 0 is empty, so there is one.
    let lo = 0;
    let hi = this.indexTerms - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareIndexTerm(mid, k) <= 0) lo = mid + 1;
      else hi = mid - 1;
    }
    const ordLo = hi * 2 ** this.entry.indexShift;
    const ordHi = Math.min(this.valueCount, ordLo + 2 ** this.entry.indexShift) - 1;
    let blockLo = Math.floor(ordLo / (BLOCK_MASK + 1));
    let blockHi = Math.floor(ordHi / (BLOCK_MASK + 1));
    while (blockLo <= blockHi) {
      const mid = (blockLo + blockHi) >>> 1;
      this.readFirstTerm(mid);
      if (compareBytes(this.term, this.termLength, k, k.length) <= 0) blockLo = mid + 1;
      else blockHi = mid - 1;
    }
    this.loadBlock(Math.max(blockHi, 0));
    for (;;) {
      const cmp = compareBytes(this.term, this.termLength, k, k.length);
      if (cmp === 0) return this.ord;
      if (cmp > 0) return -1 - this.ord;
      if (this.ord + 1 >= this.valueCount) return -1 - this.valueCount;
      if (((this.ord + 1) & BLOCK_MASK) === 0) this.loadBlock(this.currentBlock + 1);
      else this.nextInBlock();
    }
  }

  /** Every term in ord order (e.g. to build a column's term table); the callback's view is reused. */
  forEachTerm(fn: (ord: number, term: Uint8Array) => void): void {
    for (let ord = 0; ord < this.valueCount; ord++) fn(ord, this.lookupOrd(ord));
  }

  private compareIndexTerm(index: number, key: Uint8Array): number {
    const start = this.indexAddresses.get(index);
    const length = this.indexAddresses.get(index + 1) - start;
    if (length < 0 || start + length > this.entry.termsIndexLength) throw this.corrupt(`reverse index entry ${index} [${start}, +${length}) out of range`);
    const p = this.data.load(this.entry.termsIndexOffset + start, length);
    return compareBytes(this.data.bytes.subarray(p, p + length), length, key, key.length);
  }

  /** Reads the plain first term of `block` into the term buffer; returns where the block's rest starts. */
  private readFirstTerm(block: number): number {
    const at = this.entry.termsDataOffset + this.blockAddresses.get(block);
    const end = this.entry.termsDataOffset + this.entry.termsDataLength;
    const length = this.readVInt(at, end);
    if (length > this.term.length || this.vintEnd + length > end) throw this.corrupt(`first term of block ${block}: ${length} bytes (max ${this.term.length})`);
    const p = this.data.load(this.vintEnd, length);
    this.term.set(this.data.bytes.subarray(p, p + length));
    this.termLength = length;
    return this.vintEnd + length;
  }

  private loadBlock(block: number): void {
    const rest = this.readFirstTerm(block);
    const firstOrd = block * (BLOCK_MASK + 1);
    this.ord = firstOrd;
    this.currentBlock = block;
    // The first term sits in front of the rest as the LZ4 dictionary it was compressed with.
    const dictLength = this.termLength;
    this.block.set(this.term.subarray(0, dictLength));
    this.blockPos = dictLength;
    this.blockEnd = dictLength;
    if (Math.min(this.valueCount - firstOrd, BLOCK_MASK + 1) === 1) return;
    const end = block + 1 < this.blockAddresses.size ? this.entry.termsDataOffset + this.blockAddresses.get(block + 1) : this.entry.termsDataOffset + this.entry.termsDataLength;
    const length = this.readVInt(rest, end);
    if (length > this.entry.maxBlockLength) throw this.corrupt(`block ${block} decompresses to ${length} bytes, more than the recorded maximum ${this.entry.maxBlockLength}`);
    const p = this.data.load(this.vintEnd, end - this.vintEnd);
    decompress(this.data.bytes, p, p + (end - this.vintEnd), this.block, dictLength, length, this.data.name);
    this.blockEnd = dictLength + length;
  }

  private nextInBlock(): void {
    const b = this.block;
    let pos = this.blockPos;
    if (pos >= this.blockEnd) throw this.corrupt(`block ${this.currentBlock} ends before term ${this.ord + 1}`);
    const token = b[pos++];
    let prefix = token & 0x0f;
    let suffix = 1 + (token >>> 4);
    if (prefix === 15) {
      prefix += this.vint(b, pos, this.blockEnd);
      pos = this.afterVInt;
    }
    if (suffix === 16) {
      suffix += this.vint(b, pos, this.blockEnd);
      pos = this.afterVInt;
    }
    if (prefix > this.termLength || prefix + suffix > this.term.length || pos + suffix > this.blockEnd) {
      throw this.corrupt(`block ${this.currentBlock}: term ${this.ord + 1} (prefix ${prefix}, suffix ${suffix}) does not fit`);
    }
    this.term.set(b.subarray(pos, pos + suffix), prefix);
    this.termLength = prefix + suffix;
    this.blockPos = pos + suffix;
    this.ord++;
  }

  private readVInt(at: number, end: number): number {
    const n = Math.min(5, end - at);
    if (n <= 0) throw this.corrupt(`vint at ${at} past the terms`);
    const p = this.data.load(at, n);
    const v = this.vint(this.data.bytes, p, p + n);
    this.vintEnd = at + (this.afterVInt - p);
    return v;
  }

  /** A non-negative vint at b[p] (before `end`); sets afterVInt. */
  private vint(b: Uint8Array, p: number, end: number): number {
    let v = 0;
    for (let shift = 0; shift <= 28 && p < end; shift += 7) {
      const x = b[p++];
      v += (x & 0x7f) * 2 ** shift;
      if ((x & 0x80) === 0) {
        this.afterVInt = p;
        if (v > 0x7fffffff) break;
        return v;
      }
    }
    throw this.corrupt(`invalid vint at ${p}`);
  }

  private corrupt(msg: string): CorruptIndexException {
    return new CorruptIndexException(`terms dictionary: ${msg}`, this.data.name);
  }
}
