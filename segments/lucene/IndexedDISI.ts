import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { ByteArrayDataInput } from '../store/DataInput.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes } from '../store/FileSlice.js';

/**
 * Lucene's IndexedDISI (codecs/lucene90/IndexedDISI): the set of docs that have a value, where a
 * doc's rank within the set is its ordinal. Sparse vector fields store it in `.vec` at the
 * meta's docsWithFieldOffset (segments/flat/OrdToDoc.ts). Layout (little-endian except the rank
 * table), as Lucene's writer (`writeBitSet`) produces it:
 *
 * - one block per non-empty range of 65536 docs, in increasing order: int16 block (doc >>> 16),
 *   int16 (cardinality - 1), then by cardinality:
 *   - SPARSE (<= 4095): the docs' low 16 bits, one int16 each, ascending;
 *   - DENSE (4096..65535): when denseRankPower != -1 a rank table of (1024 >> (power - 7)) bytes
 *     (one big-endian uint16 per 2^power docs: set bits in the block before that sub-block), then
 *     1024 int64 words (LE) of the block's bit set;
 *   - ALL (65536): nothing more;
 * - a sentinel SPARSE block (block 32767, one entry 0xFFFF = NO_MORE_DOCS);
 * - a jump table of jumpTableEntryCount (int32 index, int32 offset) pairs: for block number j, the
 *   number of docs in blocks < j and the byte offset (from the start of the DISI) of the first
 *   written block >= j (the sentinel for j past the last block). Its length is lastBlock + 2
 *   entries, except that a set whose only block is block 0 gets no table (count 0).
 *
 * This reader decodes the whole set once into an Int32Array of docs in ordinal order (ord -> doc),
 * verifying every structure on the way (ranks, jump table, counts); doc -> ord is a binary search.
 */
export const DISI_BLOCK_SIZE = 65536;
export const DISI_DENSE_BLOCK_LONGS = 1024;
export const DISI_MAX_ARRAY_LENGTH = 4095;
export const DISI_DEFAULT_DENSE_RANK_POWER = 9;
const NO_MORE_DOCS_BLOCK = 0x7fff;

export class IndexedDISI {
  private constructor(
    /** docs[ord] = doc, strictly increasing. */
    readonly docs: Int32Array,
  ) {}

  get size(): number {
    return this.docs.length;
  }

  ordToDoc(ord: number): number {
    if (ord < 0 || ord >= this.docs.length) throw new RangeError(`ord ${ord} out of [0, ${this.docs.length})`);
    return this.docs[ord];
  }

  /** The ordinal of `doc`, or -1 when the doc has no value. */
  docToOrd(doc: number): number {
    const d = this.docs;
    let lo = 0;
    let hi = d.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = d[mid];
      if (v < doc) lo = mid + 1;
      else if (v > doc) hi = mid - 1;
      else return mid;
    }
    return -1;
  }

  /**
   * Reads `length` bytes at `offset` of `slice` (blocks + jump table, i.e. the meta's
   * docsWithFieldOffset / docsWithFieldLength) and decodes them.
   */
  static read(slice: FileSlice, offset: number, length: number, jumpTableEntryCount: number, denseRankPower: number, cost: number, maxDoc?: number): IndexedDISI {
    const bytes = readSliceBytes(slice, offset, length);
    return IndexedDISI.decode(bytes, `${slice.name} (IndexedDISI at ${offset})`, jumpTableEntryCount, denseRankPower, cost, maxDoc);
  }

  static decode(bytes: Uint8Array, resource: string, jumpTableEntryCount: number, denseRankPower: number, cost: number, maxDoc?: number): IndexedDISI {
    const corrupt = (msg: string) => new CorruptIndexException(msg, resource);
    if (denseRankPower !== -1 && (denseRankPower < 7 || denseRankPower > 15)) throw corrupt(`invalid denseRankPower ${denseRankPower} (7..15 or -1)`);
    if (cost < 0 || !Number.isSafeInteger(cost)) throw corrupt(`invalid cost ${cost}`);
    const tableEntries = Math.max(0, jumpTableEntryCount);
    const blocksEnd = bytes.length - tableEntries * 8;
    if (blocksEnd < 0) throw corrupt(`length ${bytes.length} too small for a jump table of ${tableEntries} entries`);
    if (cost > (blocksEnd / 4) * DISI_BLOCK_SIZE) throw corrupt(`cost ${cost} cannot fit in ${blocksEnd} bytes of blocks`);
    const rankBytes = denseRankPower === -1 ? 0 : DISI_DENSE_BLOCK_LONGS >> (denseRankPower - 7);
    const rankEvery = denseRankPower === -1 ? 0 : 1 << denseRankPower;

    const input = new ByteArrayDataInput(bytes, resource, 0, blocksEnd);
    const docs = new Int32Array(cost);
    let n = 0;
    // Written blocks: id, offset, docs before it (for the jump-table check).
    const blockIds: number[] = [];
    const blockOffsets: number[] = [];
    const blockIndexes: number[] = [];
    let prevBlock = -1;
    let sawSentinel = false;
    while (input.position < blocksEnd) {
      const blockOffset = input.position;
      const block = input.readShort() & 0xffff;
      const cardinality = (input.readShort() & 0xffff) + 1;
      if (block <= prevBlock) throw corrupt(`block ${block} after block ${prevBlock}: blocks must increase`);
      const base = block * DISI_BLOCK_SIZE;
      if (block === NO_MORE_DOCS_BLOCK && cardinality === 1) {
        const low = input.readShort() & 0xffff;
        if (low === 0xffff) {
          if (input.position !== blocksEnd) throw corrupt(`${blocksEnd - input.position} bytes after the NO_MORE_DOCS sentinel block`);
          blockIds.push(block);
          blockOffsets.push(blockOffset);
          blockIndexes.push(n);
          sawSentinel = true;
          break;
        }
        input.position = input.position - 2;
      }
      if (n + cardinality > cost) throw corrupt(`more docs than the expected ${cost}`);
      blockIds.push(block);
      blockOffsets.push(blockOffset);
      blockIndexes.push(n);
      if (cardinality <= DISI_MAX_ARRAY_LENGTH) {
        let prev = -1;
        for (let i = 0; i < cardinality; i++) {
          const low = input.readShort() & 0xffff;
          if (low <= prev) throw corrupt(`SPARSE block ${block}: doc ${low} after ${prev}`);
          prev = low;
          docs[n++] = base + low;
        }
      } else if (cardinality === DISI_BLOCK_SIZE) {
        for (let i = 0; i < DISI_BLOCK_SIZE; i++) docs[n++] = base + i;
      } else {
        const rank = input.readBytes(rankBytes);
        const words = input.readBytes(DISI_DENSE_BLOCK_LONGS * 8);
        const start = n;
        for (let byte = 0; byte < words.length; byte++) {
          const bit0 = byte << 3;
          if (rankEvery !== 0 && bit0 % rankEvery === 0) {
            const r = bit0 / rankEvery;
            const expected = (rank[2 * r] << 8) | rank[2 * r + 1];
            if (expected !== n - start) throw corrupt(`DENSE block ${block}: rank entry ${r} is ${expected}, counted ${n - start}`);
          }
          let b = words[byte];
          while (b !== 0) {
            const t = 31 - Math.clz32(b & -b);
            if (n >= cost) throw corrupt(`more docs than the expected ${cost}`);
            docs[n++] = base + bit0 + t;
            b &= b - 1;
          }
        }
        if (n - start !== cardinality) throw corrupt(`DENSE block ${block}: ${n - start} bits set, header says ${cardinality}`);
      }
      prevBlock = block;
    }
    if (!sawSentinel) throw corrupt('no NO_MORE_DOCS sentinel block');
    if (n !== cost) throw corrupt(`${n} docs decoded, expected ${cost}`);
    if (maxDoc !== undefined && n > 0 && docs[n - 1] >= maxDoc) throw corrupt(`doc ${docs[n - 1]} >= maxDoc ${maxDoc}`);

    // Jump table: recompute it from the blocks and compare.
    const realBlocks = blockIds.length - 1;
    const lastRealBlock = realBlocks === 0 ? -1 : blockIds[realBlocks - 1];
    let expectedEntries = lastRealBlock + 2;
    if (lastRealBlock === -1) expectedEntries = 1;
    if (expectedEntries === 2) expectedEntries = 0;
    if (tableEntries !== expectedEntries) throw corrupt(`jump table has ${tableEntries} entries, the blocks need ${expectedEntries}`);
    if (tableEntries > 0) {
      const table = new ByteArrayDataInput(bytes, resource, blocksEnd, tableEntries * 8);
      let k = 0; // first written block with id >= j
      for (let j = 0; j < tableEntries; j++) {
        while (k < realBlocks && blockIds[k] < j) k++;
        const index = table.readInt();
        const offset = table.readInt();
        if (index !== blockIndexes[k] || offset !== blockOffsets[k]) {
          throw corrupt(`jump table entry ${j} is (index ${index}, offset ${offset}), expected (${blockIndexes[k]}, ${blockOffsets[k]})`);
        }
      }
    }
    return new IndexedDISI(docs);
  }
}
