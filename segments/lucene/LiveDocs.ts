import { checkIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import { fileNameFromGeneration, generationToString } from './IndexFileNames.js';
import type { IndexDirectory } from './LuceneDirectory.js';
import { expectEnd } from './LuceneFormat.js';

/**
 * `_N_<delGen base36>.liv`, Lucene90LiveDocsFormat: index header (codec "Lucene90LiveDocs",
 * version 0, segment id, suffix = delGen in base 36), then ceil(maxDoc / 64) int64 words (LE) of
 * a bit set where bit d set = doc d is live, then the footer. Always outside the compound file.
 * Checked at open: full CRC32, the exact length, no bit set at or past maxDoc, and the number of
 * cleared bits equal to the delCount segments_N records.
 */
export const LIVE_DOCS_CODEC = 'Lucene90LiveDocs';
export const LIVE_DOCS_VERSION_START = 0;
export const LIVE_DOCS_VERSION_CURRENT = 0;
export const LIVE_DOCS_EXTENSION = 'liv';

export class LiveDocs {
  /** The bit set as bytes: LE int64 words are LE bytes, so bit d is bit (d & 7) of byte d >>> 3. */
  private readonly bits: Uint8Array;

  constructor(
    bits: Uint8Array,
    readonly maxDoc: number,
    /** Hard-deleted docs (maxDoc minus the set bits). */
    readonly numDeleted: number,
  ) {
    this.bits = bits;
  }

  get numLive(): number {
    return this.maxDoc - this.numDeleted;
  }

  isLive(doc: number): boolean {
    if (doc < 0 || doc >= this.maxDoc) throw new RangeError(`doc ${doc} out of [0, ${this.maxDoc})`);
    return ((this.bits[doc >>> 3] >>> (doc & 7)) & 1) === 1;
  }

  /** The live docs as 32-bit words (bit d of word d >>> 5), ceil(maxDoc / 32) of them: a copy. */
  words(): Uint32Array {
    const out = new Uint32Array(Math.ceil(this.maxDoc / 32));
    new Uint8Array(out.buffer).set(this.bits.subarray(0, out.byteLength));
    return out;
  }

  /** The deleted doc ids, ascending. */
  deletedDocs(): number[] {
    const out: number[] = [];
    for (let d = 0; d < this.maxDoc; d++) if (!this.isLive(d)) out.push(d);
    return out;
  }
}

export function liveDocsFileName(segmentName: string, delGen: number): string {
  return fileNameFromGeneration(segmentName, LIVE_DOCS_EXTENSION, delGen);
}

/** Reads and CRC-verifies the deletions of a segment; the deleted count must equal `delCount`. */
export function readLiveDocs(dir: IndexDirectory, segmentName: string, segmentId: Uint8Array, maxDoc: number, delGen: number, delCount: number): LiveDocs {
  const input = dir.openChecksummed(liveDocsFileName(segmentName, delGen));
  return parseLiveDocs(input, segmentId, maxDoc, delGen, delCount);
}

export function parseLiveDocs(input: ByteArrayDataInput, segmentId: Uint8Array, maxDoc: number, delGen: number, delCount: number): LiveDocs {
  const r = input.resource;
  checkIndexHeader(input, LIVE_DOCS_CODEC, LIVE_DOCS_VERSION_START, LIVE_DOCS_VERSION_CURRENT, segmentId, generationToString(delGen));
  const numWords = Math.ceil(maxDoc / 64);
  const bits = input.readBytes(numWords * 8).slice();
  expectEnd(input);
  let live = 0;
  for (let i = 0; i < bits.length; i++) live += popcount8(bits[i]);
  // Bits past maxDoc ("ghost bits") are never written by Lucene.
  const tailBits = maxDoc & 63;
  if (tailBits !== 0) {
    for (let b = maxDoc; b < numWords * 64; b++) {
      if ((bits[b >>> 3] >>> (b & 7)) & 1) throw new CorruptIndexException(`bit ${b} set beyond maxDoc ${maxDoc}`, r);
    }
  }
  const deleted = maxDoc - live;
  if (deleted !== delCount) throw new CorruptIndexException(`bits.deleted=${deleted} info.delcount=${delCount}`, r);
  return new LiveDocs(bits, maxDoc, deleted);
}

function popcount8(b: number): number {
  b = b - ((b >>> 1) & 0x55);
  b = (b & 0x33) + ((b >>> 2) & 0x33);
  return (b + (b >>> 4)) & 0x0f;
}
