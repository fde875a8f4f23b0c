import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { segmentFileName as fileName } from '../lucene/IndexFileNames.js';
import { ByteArrayDataOutput } from '../store/DataOutput.js';
import { IndexOutput } from '../store/IndexOutput.js';
import type { UnitCompressor } from './CompressionMode.js';
import {
  BEST_SPEED,
  BYTE_ARR,
  FIELDS_EXTENSION,
  INDEX_EXTENSION,
  META_CODEC,
  META_EXTENSION,
  NUMERIC_DOUBLE,
  NUMERIC_FLOAT,
  NUMERIC_INT,
  NUMERIC_LONG,
  STRING,
  TYPE_BITS,
  VERSION_CURRENT,
  modeByName,
  type StoredFieldsModeName,
  type StoredFieldsModeParams,
} from './Lucene90StoredFieldsFormat.js';
import { StoredFieldsIndexWriter } from './StoredFieldsIndex.js';
import { writeStoredFieldsInts } from './StoredFieldsInts.js';
import { toLong, writeTLong, writeZDouble, writeZFloat, writeZInt } from './StoredFieldValues.js';
import type { StoredValue } from './StoredFieldVisitor.js';

export interface StoredFieldsWriterOptions {
  /** BEST_SPEED (LZ4, Lucene's default) or BEST_COMPRESSION (DEFLATE). */
  readonly mode?: StoredFieldsModeName;
  /**
   * Explicit format parameters instead of a mode (e.g. a small chunk size in tests); files written
   * with other parameters than a mode's are readable (the chunk size is in `.fdm`) but not Lucene's bytes.
   */
  readonly format?: StoredFieldsModeParams;
  /** The segment suffix in file names and headers (Lucene's default stored fields use none). */
  readonly segmentSuffix?: string;
}

/**
 * Writes a segment's stored fields in Lucene90StoredFieldsFormat (`_N.fdt`, `_N.fdx`, `_N.fdm`;
 * layout in Lucene90StoredFieldsFormat.ts), chunk by chunk as Lucene's compressing writer does: for
 * the same docs, fields and segment id, BEST_SPEED files are Lucene's byte for byte.
 *
 * Streaming: memory is one chunk of serialized docs (a chunk is flushed once it holds chunkSize
 * bytes or maxDocsPerChunk docs; a doc larger than that makes one big chunk, compressed in slices)
 * plus 12 bytes per chunk for the index, which is written at finish().
 *
 * ```ts
 * const w = StoredFieldsWriter.create(dir, '_0', segmentId);
 * w.startDocument();
 * w.writeString(0, 'doc-1');                           // field 0: _id
 * w.writeBytes(1, new TextEncoder().encode('{"a":1}')); // field 1: _source
 * w.finishDocument();
 * w.finish(1);
 * w.close();
 * ```
 */
export class StoredFieldsWriter {
  private readonly compressor: UnitCompressor;
  private readonly index: StoredFieldsIndexWriter;
  private bufferedDocs = new ByteArrayDataOutput(1 << 16);
  /** Scratch for encoding strings (a huge string's is dropped after use). */
  private utf8 = new Uint8Array(1024);
  private numStoredFields: Int32Array = new Int32Array(16);
  private endOffsets: Int32Array = new Int32Array(16);
  private numBufferedDocs = 0;
  private numStoredFieldsInDoc = 0;
  private inDocument = false;
  private docBase = 0;
  private numChunks = 0;
  private numDirtyChunks = 0;
  private numDirtyDocs = 0;
  private finished = false;
  private closed = false;

  private constructor(
    readonly directory: string,
    readonly segmentName: string,
    private readonly segmentId: Uint8Array,
    readonly segmentSuffix: string,
    readonly mode: StoredFieldsModeParams,
    private readonly meta: IndexOutput,
    private readonly fields: IndexOutput,
  ) {
    this.compressor = mode.compression.newCompressor();
    this.index = new StoredFieldsIndexWriter(mode.blockShift);
  }

  /** Creates the segment's `.fdm` and `.fdt` in `directory` (they must not exist) and writes their headers. */
  static create(directory: string, segmentName: string, segmentId: Uint8Array, options: StoredFieldsWriterOptions = {}): StoredFieldsWriter {
    const mode = options.format ?? (options.mode === undefined ? BEST_SPEED : modeByName(options.mode));
    const suffix = options.segmentSuffix ?? '';
    const paths = [META_EXTENSION, FIELDS_EXTENSION].map((ext) => join(directory, fileName(segmentName, suffix, ext)));
    const meta = new IndexOutput(paths[0]);
    let fields: IndexOutput | undefined;
    try {
      writeIndexHeader(meta, META_CODEC, VERSION_CURRENT, segmentId, suffix);
      fields = new IndexOutput(paths[1]);
      writeIndexHeader(fields, mode.formatName, VERSION_CURRENT, segmentId, suffix);
      meta.writeVInt(mode.chunkSize);
      return new StoredFieldsWriter(directory, segmentName, segmentId, suffix, mode, meta, fields);
    } catch (e) {
      meta.abort();
      fields?.abort();
      for (const p of paths) rmSync(p, { force: true });
      throw e;
    }
  }

  /** The paths of the files this writer creates. */
  get files(): string[] {
    return [META_EXTENSION, FIELDS_EXTENSION, INDEX_EXTENSION].map((ext) => join(this.directory, fileName(this.segmentName, this.segmentSuffix, ext)));
  }

  startDocument(): void {
    this.checkWritable();
    if (this.inDocument) throw new Error('startDocument() called twice without finishDocument()');
    this.inDocument = true;
  }

  /** A string, as UTF-8 (a lone surrogate becomes U+FFFD, as in Java's encoder). */
  writeString(fieldNumber: number, value: string): void {
    this.startField(fieldNumber, STRING);
    // at most 3 UTF-8 bytes per UTF-16 unit
    if (this.utf8.length < 3 * value.length) this.utf8 = new Uint8Array(Math.max(3 * value.length, 2 * this.utf8.length));
    const { written } = UTF8.encodeInto(value, this.utf8);
    this.bufferedDocs.writeVInt(written);
    this.bufferedDocs.writeBytes(this.utf8, 0, written);
    if (this.utf8.length > 1 << 20) this.utf8 = new Uint8Array(1024);
  }

  writeBytes(fieldNumber: number, value: Uint8Array): void {
    this.startField(fieldNumber, BYTE_ARR);
    this.bufferedDocs.writeVInt(value.length);
    this.bufferedDocs.writeBytes(value);
  }

  /** An int32 (Java's int, short or byte field). */
  writeInt(fieldNumber: number, value: number): void {
    if (!Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) throw new RangeError(`int field ${fieldNumber}: ${value} is not an int32`);
    this.startField(fieldNumber, NUMERIC_INT);
    writeZInt(this.bufferedDocs, value);
  }

  /** An int64: a bigint, or a number that is a safe integer. */
  writeLong(fieldNumber: number, value: bigint | number): void {
    const l = toLong(value);
    this.startField(fieldNumber, NUMERIC_LONG);
    writeTLong(this.bufferedDocs, l);
  }

  /** A float32 (the number is rounded to float32). */
  writeFloat(fieldNumber: number, value: number): void {
    this.startField(fieldNumber, NUMERIC_FLOAT);
    writeZFloat(this.bufferedDocs, value);
  }

  writeDouble(fieldNumber: number, value: number): void {
    this.startField(fieldNumber, NUMERIC_DOUBLE);
    writeZDouble(this.bufferedDocs, value);
  }

  /** Writes a typed value with the method of its type. */
  writeField(fieldNumber: number, field: StoredValue): void {
    switch (field.type) {
      case 'string':
        this.writeString(fieldNumber, field.value);
        return;
      case 'bytes':
        this.writeBytes(fieldNumber, field.value);
        return;
      case 'int':
        this.writeInt(fieldNumber, field.value);
        return;
      case 'long':
        this.writeLong(fieldNumber, field.value);
        return;
      case 'float':
        this.writeFloat(fieldNumber, field.value);
        return;
      case 'double':
        this.writeDouble(fieldNumber, field.value);
        return;
    }
  }

  finishDocument(): void {
    this.checkWritable();
    if (!this.inDocument) throw new Error('finishDocument() without startDocument()');
    this.inDocument = false;
    if (this.numBufferedDocs === this.numStoredFields.length) {
      const grown = Math.max(16, Math.ceil(this.numBufferedDocs * 1.5));
      this.numStoredFields = grow(this.numStoredFields, grown);
      this.endOffsets = grow(this.endOffsets, grown);
    }
    this.numStoredFields[this.numBufferedDocs] = this.numStoredFieldsInDoc;
    this.numStoredFieldsInDoc = 0;
    this.endOffsets[this.numBufferedDocs] = this.bufferedDocs.length;
    this.numBufferedDocs++;
    if (this.chunkIsFull()) this.flush(false);
  }

  /**
   * Flushes the last (dirty) chunk, writes `.fdx` and the rest of `.fdm`, and the footers.
   * `numDocs` must be the number of docs written.
   */
  finish(numDocs: number): void {
    this.checkWritable();
    if (this.inDocument) throw new Error('finish() inside a document: call finishDocument() first');
    if (this.numBufferedDocs > 0) this.flush(true);
    if (this.docBase !== numDocs) throw new Error(`wrote ${this.docBase} docs, finish called with numDocs=${numDocs}`);
    const fdxPath = join(this.directory, fileName(this.segmentName, this.segmentSuffix, INDEX_EXTENSION));
    this.index.finish(numDocs, this.fields.filePointer, this.meta, fdxPath, this.segmentId, this.segmentSuffix);
    this.meta.writeVLong(this.numChunks);
    this.meta.writeVLong(this.numDirtyChunks);
    this.meta.writeVLong(this.numDirtyDocs);
    writeFooter(this.meta);
    writeFooter(this.fields);
    this.finished = true;
  }

  /**
   * Closes (and fsyncs) the files. A writer closed before finish() deletes what it wrote: a
   * stored-fields file set without its index and footers is of no use.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.finished) {
      this.meta.close();
      this.fields.close();
    } else {
      this.meta.abort();
      this.fields.abort();
      for (const p of this.files) rmSync(p, { force: true });
    }
  }

  private startField(fieldNumber: number, type: number): void {
    if (!this.inDocument) throw new Error('write a field between startDocument() and finishDocument()');
    if (!Number.isInteger(fieldNumber) || fieldNumber < 0 || fieldNumber > 0x7fffffff) throw new RangeError(`invalid field number ${fieldNumber}`);
    this.numStoredFieldsInDoc++;
    this.bufferedDocs.writeVLong(fieldNumber * 2 ** TYPE_BITS + type);
  }

  private chunkIsFull(): boolean {
    return this.bufferedDocs.length >= this.mode.chunkSize || this.numBufferedDocs >= this.mode.maxDocsPerChunk;
  }

  /** Writes the buffered docs as one chunk; `force`: finish() flushes a chunk that is not full (dirty). */
  private flush(force: boolean): void {
    const n = this.numBufferedDocs;
    const out = this.fields;
    this.numChunks++;
    if (force) {
      this.numDirtyChunks++;
      this.numDirtyDocs += n;
    }
    this.index.writeIndex(n, out.filePointer);
    // end offsets become lengths, in place
    const lengths = this.endOffsets;
    for (let i = n - 1; i > 0; i--) lengths[i] -= lengths[i - 1];
    const size = this.bufferedDocs.length;
    const sliced = size >= 2 * this.mode.chunkSize;
    out.writeVInt(this.docBase);
    out.writeVInt((n << 2) | (force ? 2 : 0) | (sliced ? 1 : 0));
    saveInts(this.numStoredFields, n, out);
    saveInts(lengths, n, out);
    const content = this.bufferedDocs.toBytes();
    if (sliced) {
      for (let start = 0; start < size; start += this.mode.chunkSize) {
        this.compressor.compress(content, start, Math.min(this.mode.chunkSize, size - start), out);
      }
    } else {
      this.compressor.compress(content, 0, size, out);
    }
    this.docBase += n;
    this.numBufferedDocs = 0;
    // after a huge doc, drop its buffer rather than keep it for the small chunks that follow
    if (size > 4 * this.mode.chunkSize) this.bufferedDocs = new ByteArrayDataOutput(1 << 16);
    else this.bufferedDocs.reset();
  }

  private checkWritable(): void {
    if (this.closed) throw new Error('stored fields writer is closed');
    if (this.finished) throw new Error('stored fields writer is finished');
  }
}

const UTF8 = new TextEncoder();

function saveInts(values: Int32Array, count: number, out: IndexOutput): void {
  if (count === 1) out.writeVInt(values[0]);
  else writeStoredFieldsInts(values, count, out);
}

function grow(a: Int32Array, length: number): Int32Array {
  const b = new Int32Array(length);
  b.set(a);
  return b;
}
