import { checkIndexHeader, checksumEntireFile, openChecksummed, writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { DirectMonotonicMeta, DirectMonotonicReader } from '../packed/DirectMonotonicReader.js';
import { DirectMonotonicWriter } from '../packed/DirectMonotonicWriter.js';
import type { ByteArrayDataInput } from '../store/DataInput.js';
import type { DataOutput } from '../store/DataOutput.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes } from '../store/FileSlice.js';
import { IndexOutput } from '../store/IndexOutput.js';
import { INDEX_CODEC, INDEX_VERSION_CURRENT, INDEX_VERSION_START } from './Lucene90StoredFieldsFormat.js';

/**
 * The stored-fields index (Lucene's FieldsIndexWriter / FieldsIndexReader): for every chunk of
 * `.fdt`, its first doc and its start pointer, as two DirectMonotonic arrays of numChunks + 1
 * values in `.fdx` (the last values: maxDoc and the end of the last chunk), described by the
 * `.fdm` fields from maxDoc to maxPointer (layout in Lucene90StoredFieldsFormat.ts).
 */
export class StoredFieldsIndexWriter {
  /** Docs per chunk and chunk start pointers, until finish() packs them: 12 bytes a chunk. */
  private chunkDocs = new Int32Array(256);
  private startPointers = new Float64Array(256);
  private numChunks = 0;
  private totalDocs = 0;

  constructor(private readonly blockShift: number) {}

  /** Records a chunk of `numDocs` docs starting at `startPointer` in `.fdt`. */
  writeIndex(numDocs: number, startPointer: number): void {
    if (this.numChunks > 0 && startPointer < this.startPointers[this.numChunks - 1]) {
      throw new Error(`chunk start pointers must not decrease: ${startPointer} after ${this.startPointers[this.numChunks - 1]}`);
    }
    if (this.numChunks === this.chunkDocs.length) {
      const docs = new Int32Array(this.numChunks * 2);
      docs.set(this.chunkDocs);
      this.chunkDocs = docs;
      const pointers = new Float64Array(this.numChunks * 2);
      pointers.set(this.startPointers);
      this.startPointers = pointers;
    }
    this.chunkDocs[this.numChunks] = numDocs;
    this.startPointers[this.numChunks] = startPointer;
    this.numChunks++;
    this.totalDocs += numDocs;
  }

  /**
   * Writes `.fdx` at `fdxPath` and the index's part of `.fdm` onto `meta`. `maxPointer` is where
   * the last chunk ends in `.fdt`.
   */
  finish(numDocs: number, maxPointer: number, meta: DataOutput, fdxPath: string, segmentId: Uint8Array, segmentSuffix: string): void {
    if (numDocs !== this.totalDocs) throw new Error(`expected ${numDocs} docs, but the chunks hold ${this.totalDocs}`);
    const n = this.numChunks;
    if (n > 0 && maxPointer < this.startPointers[n - 1]) throw new Error(`maxPointer ${maxPointer} before the last chunk ${this.startPointers[n - 1]}`);
    const data = new IndexOutput(fdxPath);
    try {
      writeIndexHeader(data, INDEX_CODEC, INDEX_VERSION_CURRENT, segmentId, segmentSuffix);
      meta.writeInt(numDocs);
      meta.writeInt(this.blockShift);
      meta.writeInt(n + 1);
      meta.writeLong(data.filePointer);
      const docs = DirectMonotonicWriter.getInstance(meta, data, n + 1, this.blockShift);
      let doc = 0;
      docs.add(doc);
      for (let i = 0; i < n; i++) docs.add((doc += this.chunkDocs[i]));
      docs.finish();
      meta.writeLong(data.filePointer);
      const pointers = DirectMonotonicWriter.getInstance(meta, data, n + 1, this.blockShift);
      for (let i = 0; i < n; i++) pointers.add(this.startPointers[i]);
      pointers.add(maxPointer);
      pointers.finish();
      meta.writeLong(data.filePointer);
      meta.writeLong(maxPointer);
      writeFooter(data);
      data.close();
    } catch (e) {
      data.abort();
      throw e;
    }
  }
}

/**
 * The index of an open segment, held in memory as `.fdx`'s packed bytes (a few bits per chunk;
 * nothing else grows with the stored data). Verified whole (CRC32) when opened.
 */
export class StoredFieldsIndexReader {
  private constructor(
    readonly fdxSlice: FileSlice,
    readonly maxDoc: number,
    /** Chunks in `.fdt`. */
    readonly numChunks: number,
    private readonly docBases: DirectMonotonicReader,
    private readonly startPointers: DirectMonotonicReader,
    /** End of the last chunk in `.fdt`. */
    readonly maxPointer: number,
  ) {}

  /** Reads the index's fields of `.fdm` (positioned after chunkSize) and opens `.fdx`. */
  static read(meta: ByteArrayDataInput, fdxSlice: FileSlice, segmentId: Uint8Array, segmentSuffix: string): StoredFieldsIndexReader {
    const r = meta.resource;
    const maxDoc = meta.readInt();
    const blockShift = meta.readInt();
    const numValues = meta.readInt();
    if (maxDoc < 0) throw new CorruptIndexException(`invalid maxDoc ${maxDoc}`, r);
    if (numValues < 1 || numValues - 1 > maxDoc) throw new CorruptIndexException(`invalid chunk count ${numValues - 1} for ${maxDoc} docs`, r);
    const docsStart = meta.readLong();
    const docsMeta = DirectMonotonicMeta.load(meta, numValues, blockShift);
    const pointersStart = meta.readLong();
    const pointersMeta = DirectMonotonicMeta.load(meta, numValues, blockShift);
    const pointersEnd = meta.readLong();
    const maxPointer = meta.readLong();

    const fdx = openChecksummed(readSliceBytes(fdxSlice), fdxSlice.name);
    checkIndexHeader(fdx, INDEX_CODEC, INDEX_VERSION_START, INDEX_VERSION_CURRENT, segmentId, segmentSuffix);
    const dataEnd = fdx.position + fdx.remaining;
    if (!(fdx.position <= docsStart && docsStart <= pointersStart && pointersStart <= pointersEnd && pointersEnd <= dataEnd)) {
      throw new CorruptIndexException(`index arrays [${docsStart}, ${pointersStart}, ${pointersEnd}) outside the data of ${fdxSlice.name} (ends at ${dataEnd})`, r);
    }
    const docBases = new DirectMonotonicReader(docsMeta, fdx.bytes, docsStart, pointersStart - docsStart, fdxSlice.name);
    const startPointers = new DirectMonotonicReader(pointersMeta, fdx.bytes, pointersStart, pointersEnd - pointersStart, fdxSlice.name);
    const numChunks = numValues - 1;
    if (docBases.get(0) !== 0 || docBases.get(numChunks) !== maxDoc) {
      throw new CorruptIndexException(`doc bases run from ${docBases.get(0)} to ${docBases.get(numChunks)}, expected 0 to ${maxDoc}`, fdxSlice.name);
    }
    if (startPointers.get(numChunks) !== maxPointer) {
      throw new CorruptIndexException(`the last start pointer ${startPointers.get(numChunks)} is not maxPointer ${maxPointer}`, fdxSlice.name);
    }
    return new StoredFieldsIndexReader(fdxSlice, maxDoc, numChunks, docBases, startPointers, maxPointer);
  }

  /** The chunk holding `doc` (0 <= doc < maxDoc): the last chunk whose first doc is <= doc. */
  chunkOf(doc: number): number {
    const i = this.docBases.binarySearch(0, this.numChunks, doc);
    return i >= 0 ? i : -2 - i;
  }

  /** First doc of chunk i (i == numChunks gives maxDoc). */
  docBase(i: number): number {
    return this.docBases.get(i);
  }

  /** Where chunk i starts in `.fdt` (i == numChunks gives maxPointer, where the last one ends). */
  startPointer(i: number): number {
    return this.startPointers.get(i);
  }

  checkIntegrity(): void {
    checksumEntireFile(this.fdxSlice);
  }
}
