import type { ByteArrayDataInput } from '../store/DataInput.js';
import type { DataOutput } from '../store/DataOutput.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';

/**
 * Which docs of a segment have a vector, and how vector ordinals map to docs (Lucene's
 * OrdToDocDISIReaderConfiguration). Written in the meta file (`.vemf`, `.vemq`) right after the
 * vector count; sparse fields keep an IndexedDISI doc set and an ord->doc table in the data file
 * (`.vec`, `.veq`). Little-endian:
 *
 * | field               | type  | meaning                                                               |
 * |---------------------|-------|-----------------------------------------------------------------------|
 * | docsWithFieldOffset | int64 | -2 empty (no vectors); -1 dense (docs 0..maxDoc-1 all have one, ord == doc); -3 dense but ords reordered; >= 0 sparse: offset of the IndexedDISI in the data file |
 * | docsWithFieldLength | int64 | bytes of the IndexedDISI (0 unless sparse)                            |
 * | jumpTableEntryCount | int16 | IndexedDISI jump-table entries (-1 unless sparse)                     |
 * | denseRankPower      | int8  | IndexedDISI rank granularity, 7..15 or -1 (-1 unless sparse; Lucene uses 9) |
 *
 * Empty and dense stop there (prescore writes only these two: -2/-1, 0, -1, -1). Otherwise:
 *
 * | case                      | then                                                                |
 * |---------------------------|---------------------------------------------------------------------|
 * | sparse, ords in doc order | int64 addressesOffset, vint blockShift (> 0, <= 30), ceil(size / 2^blockShift) DirectMonotonic block metas (int64 min, float avg, int64 offset, int8 bitsPerValue; segments/packed/DirectMonotonicWriter.ts), int64 addressesLength: ord -> doc as a DirectMonotonic sequence at addressesOffset |
 * | sparse, reordered         | int64 addressesOffset, vint blockShift = 0, int64 addressesLength (ord -> doc as a DirectWriter table), int64 docToOrdLength |
 * | dense reordered (-3)      | the same as sparse reordered; blockShift must be 0                   |
 *
 * Reordered ords (Lucene 10.x graph reordering) are parsed but not served: SegmentHandle.docToOrd
 * needs ords in doc order, so opening such a segment is refused with a clear error.
 */
export type OrdToDocConfig =
  | { readonly kind: 'empty' }
  /** Every doc 0..maxDoc-1 has a vector and ord == doc. */
  | { readonly kind: 'dense' }
  /** Every doc has a vector, but ords were reordered (e.g. graph-order); ord->doc is a DirectWriter table. */
  | { readonly kind: 'denseReordered'; readonly addressesOffset: number; readonly addressesLength: number; readonly docToOrdLength: number }
  | {
      readonly kind: 'sparse';
      readonly docsWithFieldOffset: number;
      readonly docsWithFieldLength: number;
      readonly jumpTableEntryCount: number;
      readonly denseRankPower: number;
      readonly addressesOffset: number;
      /** > 0: ord->doc is DirectMonotonic with this block shift; 0: a reordered DirectWriter table. */
      readonly blockShift: number;
      /** DirectMonotonic per-block meta (min, avg, offset, bitsPerValue), when blockShift > 0. */
      readonly monotonicBlocks: readonly MonotonicBlockMeta[];
      readonly addressesLength: number;
      readonly docToOrdLength: number;
    };

export interface MonotonicBlockMeta {
  readonly min: number;
  readonly avg: number;
  readonly offset: number;
  readonly bitsPerValue: number;
}

export function readOrdToDocConfig(meta: ByteArrayDataInput, size: number): OrdToDocConfig {
  const docsWithFieldOffset = meta.readLong();
  const docsWithFieldLength = meta.readLong();
  const jumpTableEntryCount = meta.readShort();
  const denseRankPower = meta.readSignedByte();
  if (docsWithFieldOffset === -2) return { kind: 'empty' };
  if (docsWithFieldOffset === -1) return { kind: 'dense' };
  if (docsWithFieldOffset === -3) {
    const addressesOffset = meta.readLong();
    const blockShift = meta.readVInt();
    if (blockShift !== 0) throw new CorruptIndexException(`reordered ord-to-doc must have blockShift 0, got ${blockShift}`, meta.resource);
    const addressesLength = meta.readLong();
    const docToOrdLength = meta.readLong();
    return { kind: 'denseReordered', addressesOffset, addressesLength, docToOrdLength };
  }
  if (docsWithFieldOffset < 0) throw new CorruptIndexException(`invalid docsWithFieldOffset ${docsWithFieldOffset}`, meta.resource);
  const addressesOffset = meta.readLong();
  const blockShift = meta.readVInt();
  const monotonicBlocks: MonotonicBlockMeta[] = [];
  if (blockShift > 0) {
    if (blockShift > 30) throw new CorruptIndexException(`invalid DirectMonotonic blockShift ${blockShift}`, meta.resource);
    const numBlocks = Math.ceil(size / 2 ** blockShift);
    for (let i = 0; i < numBlocks; i++) {
      const min = meta.readLong();
      const avg = meta.readFloat();
      const offset = meta.readLong();
      const bitsPerValue = meta.readByte();
      monotonicBlocks.push({ min, avg, offset, bitsPerValue });
    }
  }
  const addressesLength = meta.readLong();
  const docToOrdLength = blockShift === 0 ? meta.readLong() : 0;
  return {
    kind: 'sparse',
    docsWithFieldOffset,
    docsWithFieldLength,
    jumpTableEntryCount,
    denseRankPower,
    addressesOffset,
    blockShift,
    monotonicBlocks,
    addressesLength,
    docToOrdLength,
  };
}

/** prescore only writes dense fields (every doc has a vector) or empty ones. */
export function writeDenseOrdToDoc(meta: DataOutput, count: number, maxDoc: number): void {
  if (count !== 0 && count !== maxDoc) throw new Error(`prescore writes dense fields only: ${count} vectors for ${maxDoc} docs`);
  meta.writeLong(count === 0 ? -2 : -1);
  meta.writeLong(0);
  meta.writeShort(-1);
  meta.writeByte(0xff);
}
