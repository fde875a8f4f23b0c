import { join } from 'node:path';
import { checkIndexHeader, checksumEntireFile, openChecksummed, retrieveChecksum, FOOTER_LENGTH } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { segmentFileName } from '../lucene/IndexFileNames.js';
import { ByteArrayDataInput } from '../store/DataInput.js';
import type { FileSlice } from '../store/FileSlice.js';
import { readSliceBytes, wholeFile } from '../store/FileSlice.js';
import { closeFile, openForRead } from '../store/native/IoUring.js';
import { POSIX_FADV_WILLNEED, posixFadvise } from '../store/native/libc.js';
import { MappedFile } from '../store/native/MappedFile.js';
import { PreadBytes } from '../store/RandomAccessBytes.js';
import { CompressedUnit, type StoredFieldsCompression } from './CompressionMode.js';
import {
  BYTE_ARR,
  FIELDS_EXTENSION,
  INDEX_EXTENSION,
  META_CODEC,
  META_EXTENSION,
  META_VERSION_START,
  NUMERIC_DOUBLE,
  NUMERIC_FLOAT,
  NUMERIC_INT,
  NUMERIC_LONG,
  STRING,
  VERSION_CURRENT,
  VERSION_START,
  STORED_FIELDS_MODES,
  modeByName,
  type StoredFieldsModeName,
  type StoredFieldsModeParams,
} from './Lucene90StoredFieldsFormat.js';
import { StoredFieldsIndexReader } from './StoredFieldsIndex.js';
import { readStoredFieldsInts } from './StoredFieldsInts.js';
import { readTLong, readZDouble, readZFloat, readZInt } from './StoredFieldValues.js';
import { DocumentCollector, type StoredField, type StoredFieldVisitor } from './StoredFieldVisitor.js';
import { ZSTD814_STORED_FIELDS } from './Zstd814StoredFieldsFormat.js';

/** Where a segment's logical files are: a Lucene SegmentDirectory (plain or compound) fits. */
export interface SegmentFiles {
  openSlice(name: string): FileSlice;
}

/** The plain files of a directory (prescore's own segments). */
export function directoryFiles(path: string): SegmentFiles {
  return { openSlice: (name) => wholeFile(join(path, name), name) };
}

export interface StoredFieldsReaderOptions {
  /**
   * The mode the segment says it uses (Lucene reads it from the `.si` attribute
   * `Lucene90StoredFieldsFormat.mode`); checked against the `.fdt` codec. Without it, the format
   * is the one the `.fdt` codec names: Lucene's BEST_SPEED or BEST_COMPRESSION, or Elasticsearch's
   * `ZstdStoredFields814` (whose segments carry `Zstd814StoredFieldsFormat.mode` instead).
   */
  readonly mode?: StoredFieldsModeName;
  readonly segmentSuffix?: string;
  /** The segment's maxDoc (from `.si`): checked against the index. */
  readonly maxDoc?: number;
  /**
   * How `.fdt` is read in place: 'mmap' (default; zero copy, prefetch by madvise) or 'pread'
   * (positioned reads of one chunk at a time; prefetch by posix_fadvise).
   */
  readonly readPath?: 'mmap' | 'pread';
}

/** The longest index header: 4 + 1 + 127 (codec) + 4 + 16 + 1 + 255 (suffix) bytes. */
const HEADER_PEEK = 408;

/** Chunks in a row found resident after which prefetch() only samples (about 6 searches' hits). */
const WARM_STREAK = 64;
/** Warm, one prefetch() call in this many probes one chunk (one mincore, ~3 us). */
const SAMPLE_CALLS = 16;

/** The `.fdt` codecs this reader knows: Lucene's two modes and Elasticsearch's zstd format on the same files. */
const READABLE_FORMATS: readonly StoredFieldsModeParams[] = [...STORED_FIELDS_MODES, ZSTD814_STORED_FIELDS];

/**
 * Reads a segment's stored fields (Lucene90StoredFieldsFormat, BEST_SPEED and BEST_COMPRESSION, as
 * Lucene 9.9 to 10.x write them, layout in Lucene90StoredFieldsFormat.ts; and Elasticsearch 8.16+'s
 * zstd variant of the same files, Zstd814StoredFieldsFormat.ts).
 *
 * Memory: `.fdm` is read and CRC-checked at open; `.fdx` is held as its packed bytes (a few bits
 * per chunk); `.fdt` stays on disk and is read in place, one chunk at a time (a mapped view, or a
 * pread of the chunk). The last chunk's decompressed bytes are kept, so consecutive docs of a
 * chunk decompress it once; only the dictionary and the blocks holding the wanted doc are
 * decompressed. `.fdt`'s CRC32 is checked by checkIntegrity(), its footer structure at open.
 *
 * Not safe for concurrent use (one chunk cache per reader): open one reader per thread.
 */
export class StoredFieldsReader {
  private closed = false;
  // --- the cached chunk ---
  private chunk = -1;
  private chunkDocBase = 0;
  private chunkDocs = 0;
  private sliced = false;
  private numStoredFields = new Int32Array(16);
  /** offsets[i] .. offsets[i + 1]: doc i of the chunk in the decompressed bytes. */
  private offsets = new Int32Array(17);
  private units: CompressedUnit[] = [new CompressedUnit()];
  private numUnits = 0;
  private dictDecoded = new Uint8Array(1);
  /** Per unit, one flag per block; blockDecoded[unitBlockBase[u] + i]. */
  private blockDecoded = new Uint8Array(16);
  private unitBlockBase = new Int32Array(2);
  /** The chunk's serialized docs, decompressed as far as needed. */
  private data = new Uint8Array(0);
  /** [dictionary | block] of the unit `scratchUnit`. */
  private scratch = new Uint8Array(0);
  private scratchUnit = -1;
  /** The compressed chunk: src[srcStart, srcEnd). */
  private src: Uint8Array = new Uint8Array(0);
  private srcStart = 0;
  private srcEnd = 0;
  private fadviseFd = -1;
  /** Chunks in a row that prefetch() found resident (mapping only). */
  private residentStreak = 0;
  private prefetchCalls = 0;

  private constructor(
    readonly fdtSlice: FileSlice,
    readonly mode: StoredFieldsModeParams,
    private readonly compression: StoredFieldsCompression,
    /** The chunk (slice) size recorded in `.fdm`. */
    readonly chunkSize: number,
    readonly index: StoredFieldsIndexReader,
    readonly numChunks: number,
    readonly numDirtyChunks: number,
    readonly numDirtyDocs: number,
    /** The mapping of `.fdt` (mmap read path), else null. */
    readonly mapping: MappedFile | null,
    private readonly pread: PreadBytes | null,
  ) {}

  /**
   * Opens the stored fields of segment `segmentName` (id `segmentId`, from `segments_N` or the
   * commit) in `files`: `.fdm` verified whole, `.fdx` verified whole and kept, `.fdt` checked
   * structurally (header, footer) and mapped or opened for pread. Throws CorruptIndexException
   * naming the logical file (e.g. `_0.cfs[_0.fdt]`).
   */
  static open(files: SegmentFiles, segmentName: string, segmentId: Uint8Array, options: StoredFieldsReaderOptions = {}): StoredFieldsReader {
    const suffix = options.segmentSuffix ?? '';
    const fdtSlice = files.openSlice(segmentFileName(segmentName, suffix, FIELDS_EXTENSION));
    const metaSlice = files.openSlice(segmentFileName(segmentName, suffix, META_EXTENSION));
    const fdxSlice = files.openSlice(segmentFileName(segmentName, suffix, INDEX_EXTENSION));

    const header = new ByteArrayDataInput(readSliceBytes(fdtSlice, 0, Math.min(fdtSlice.length, HEADER_PEEK)), fdtSlice.name);
    const formatName = peekCodecName(header);
    const expected = options.mode === undefined ? undefined : modeByName(options.mode);
    const mode = expected ?? READABLE_FORMATS.find((f) => f.formatName === formatName);
    if (mode === undefined) throw new CorruptIndexException(`unknown stored fields format ${formatName}`, fdtSlice.name);
    const { version } = checkIndexHeader(header, mode.formatName, VERSION_START, VERSION_CURRENT, segmentId, suffix);
    const headerLength = header.position;
    retrieveChecksum(fdtSlice);

    const meta = openChecksummed(readSliceBytes(metaSlice), metaSlice.name);
    checkIndexHeader(meta, META_CODEC, META_VERSION_START, version, segmentId, suffix);
    const chunkSize = meta.readVInt();
    if (chunkSize <= 0) throw new CorruptIndexException(`invalid chunk size ${chunkSize}`, metaSlice.name);
    const index = StoredFieldsIndexReader.read(meta, fdxSlice, segmentId, suffix);
    const numChunks = meta.readVLong();
    const numDirtyChunks = meta.readVLong();
    const numDirtyDocs = meta.readVLong();
    if (numChunks !== index.numChunks) throw new CorruptIndexException(`numChunks ${numChunks} but the index has ${index.numChunks} chunks`, metaSlice.name);
    if (numDirtyChunks > numChunks) throw new CorruptIndexException(`more dirty chunks (${numDirtyChunks}) than chunks (${numChunks})`, metaSlice.name);
    if ((numDirtyChunks === 0) !== (numDirtyDocs === 0) || numDirtyDocs < numDirtyChunks) {
      throw new CorruptIndexException(`inconsistent dirty counters: ${numDirtyChunks} chunks, ${numDirtyDocs} docs`, metaSlice.name);
    }
    if (!meta.eof()) throw new CorruptIndexException(`${meta.remaining} unexpected bytes at the end`, metaSlice.name);
    if (options.maxDoc !== undefined && options.maxDoc !== index.maxDoc) {
      throw new CorruptIndexException(`the index covers ${index.maxDoc} docs, the segment has ${options.maxDoc}`, fdxSlice.name);
    }
    if (index.startPointer(0) < headerLength || index.maxPointer > fdtSlice.length - FOOTER_LENGTH) {
      throw new CorruptIndexException(`chunks [${index.startPointer(0)}, ${index.maxPointer}) outside the data of a file of ${fdtSlice.length} bytes`, fdtSlice.name);
    }

    const readPath = options.readPath ?? 'mmap';
    const mapping = readPath === 'mmap' ? MappedFile.open(fdtSlice.path, fdtSlice.offset, fdtSlice.length, { advice: 'random' }) : null;
    const pread = readPath === 'pread' ? new PreadBytes(fdtSlice) : null;
    return new StoredFieldsReader(fdtSlice, mode, mode.compression, chunkSize, index, numChunks, numDirtyChunks, numDirtyDocs, mapping, pread);
  }

  get maxDoc(): number {
    return this.index.maxDoc;
  }

  /** Visits the stored fields of `doc` (0 <= doc < maxDoc; deleted docs included). */
  document(doc: number, visitor: StoredFieldVisitor): void {
    this.ensureOpen();
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.index.maxDoc) throw new RangeError(`doc ${doc} out of [0, ${this.index.maxDoc})`);
    if (this.chunk < 0 || doc < this.chunkDocBase || doc >= this.chunkDocBase + this.chunkDocs) this.loadChunk(this.index.chunkOf(doc));
    const i = doc - this.chunkDocBase;
    const from = this.offsets[i];
    const to = this.offsets[i + 1];
    const numFields = this.numStoredFields[i];
    if (numFields === 0) return;
    this.decompress(from, to);
    const name = this.fdtSlice.name;
    const input = new ByteArrayDataInput(this.data, name, from, to - from);
    for (let f = 0; f < numFields; f++) {
      const infoAndBits = input.readVLong();
      const fieldNumber = Math.floor(infoAndBits / 8);
      const type = infoAndBits % 8;
      if (type > NUMERIC_DOUBLE) throw new CorruptIndexException(`unknown stored field type ${type} (doc ${doc}, field ${fieldNumber})`, name);
      if (fieldNumber > 0x7fffffff) throw new CorruptIndexException(`invalid field number ${fieldNumber} (doc ${doc})`, name);
      const status = visitor.needsField(fieldNumber);
      if (status === 'stop') return;
      if (status === 'no') {
        // the last field needs no skipping: the doc ends here
        if (f === numFields - 1) return;
        skipValue(input, type);
        continue;
      }
      readValue(input, type, fieldNumber, visitor);
    }
  }

  /** Every stored field of `doc`, in the order written (bytes copied). */
  documentFields(doc: number): StoredField[] {
    const collector = new DocumentCollector();
    this.document(doc, collector);
    return collector.fields;
  }

  /** The `.fdt` byte range [start, end) of the chunk holding `doc`. */
  chunkRange(doc: number): { start: number; end: number } {
    this.ensureOpen();
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.index.maxDoc) throw new RangeError(`doc ${doc} out of [0, ${this.index.maxDoc})`);
    const chunk = this.index.chunkOf(doc);
    return { start: this.index.startPointer(chunk), end: this.index.startPointer(chunk + 1) };
  }

  /**
   * Asks the kernel to start reading the chunks that hold `docs` (madvise WILLNEED over the
   * mapping, or posix_fadvise WILLNEED on the pread path), each chunk once, and returns at once.
   * For a known hit list, before document() is called on it. Returns the number of chunks it
   * covered.
   *
   * On the mapping, a chunk found resident (mincore) is not advised, and once WARM_STREAK chunks
   * in a row were, only every SAMPLE_CALLS-th call probes one chunk: a warm `.fdt` pays nothing
   * (madvise of resident pages cost ~10 us a chunk here, 27% of reading a hit's source), and a
   * probe that finds a chunk cold resumes advising every chunk (never backing off while cold,
   * Lucene #16145).
   */
  prefetch(docs: ArrayLike<number>): number {
    this.ensureOpen();
    let probe = this.mapping !== null && this.residentStreak >= WARM_STREAK && this.prefetchCalls++ % SAMPLE_CALLS === 0;
    const seen = new Set<number>();
    for (let k = 0; k < docs.length; k++) {
      const doc = docs[k];
      if (!Number.isInteger(doc) || doc < 0 || doc >= this.index.maxDoc) throw new RangeError(`doc ${doc} out of [0, ${this.index.maxDoc})`);
      const chunk = this.index.chunkOf(doc);
      if (seen.has(chunk)) continue;
      seen.add(chunk);
      const start = this.index.startPointer(chunk);
      const length = this.index.startPointer(chunk + 1) - start;
      if (this.mapping) {
        if (this.residentStreak >= WARM_STREAK && !probe) continue;
        probe = false;
        if (this.mapping.isResident(start, length)) {
          this.residentStreak++;
        } else {
          this.residentStreak = 0;
          this.mapping.prefetch(start, length);
        }
      } else {
        if (this.fadviseFd < 0) this.fadviseFd = openForRead(this.fdtSlice.path);
        posixFadvise(this.fadviseFd, this.fdtSlice.offset + start, length, POSIX_FADV_WILLNEED, this.fdtSlice.path);
      }
    }
    return seen.size;
  }

  /** Full CRC32 check of `.fdx` and `.fdt` (`.fdm` was checked at open). */
  checkIntegrity(): void {
    this.ensureOpen();
    this.index.checkIntegrity();
    checksumEntireFile(this.fdtSlice);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.src = new Uint8Array(0); // never touch a view of the mapping after it is gone
    this.mapping?.close();
    this.pread?.close();
    if (this.fadviseFd >= 0) closeFile(this.fadviseFd);
  }

  private ensureOpen(): void {
    if (this.closed) throw new Error(`stored fields reader of ${this.fdtSlice.name} is closed`);
  }

  /** Makes `.fdt` bytes [start, end) readable as this.src[this.srcStart, this.srcEnd). */
  private loadBytes(start: number, end: number): void {
    const length = end - start;
    if (this.pread) {
      this.srcStart = this.pread.load(start, length);
      this.src = this.pread.bytes;
    } else {
      const m = this.mapping!;
      const view = m.chunkIndex(start);
      const local = start - m.chunkStart(view);
      if (local + length <= m.chunkLength(view)) {
        this.src = m.chunkBytes(view);
        this.srcStart = local;
      } else {
        // a chunk across two 1 GiB views of a file over 4 GiB: the rare copy
        this.src = readSliceBytes(this.fdtSlice, start, length);
        this.srcStart = 0;
      }
    }
    this.srcEnd = this.srcStart + length;
  }

  /** Reads the header of chunk `chunk` and where its compressed units lie. */
  private loadChunk(chunk: number): void {
    this.chunk = -1; // a chunk that fails to load is not kept
    const name = this.fdtSlice.name;
    const start = this.index.startPointer(chunk);
    const end = this.index.startPointer(chunk + 1);
    if (!(start < end && end <= this.index.maxPointer)) throw new CorruptIndexException(`chunk ${chunk} has an invalid range [${start}, ${end})`, name);
    this.loadBytes(start, end);
    const input = new ByteArrayDataInput(this.src, name, this.srcStart, end - start);
    const expectedBase = this.index.docBase(chunk);
    const expectedDocs = this.index.docBase(chunk + 1) - expectedBase;
    const docBase = input.readVInt();
    const token = input.readVInt();
    const n = token >>> 2;
    if (docBase !== expectedBase || n !== expectedDocs || n === 0) {
      throw new CorruptIndexException(
        `chunk ${chunk} at ${start}: docBase=${docBase}, chunkDocs=${n}, but the index says docBase=${expectedBase}, chunkDocs=${expectedDocs}`,
        name,
      );
    }
    if (this.numStoredFields.length < n) {
      this.numStoredFields = new Int32Array(n);
      this.offsets = new Int32Array(n + 1);
    }
    const offsets = this.offsets;
    offsets[0] = 0;
    if (n === 1) {
      this.numStoredFields[0] = input.readVInt();
      offsets[1] = input.readVInt();
    } else {
      readStoredFieldsInts(input, n, this.numStoredFields, 0);
      readStoredFieldsInts(input, n, offsets, 1);
    }
    for (let i = 0; i < n; i++) {
      const length = offsets[i + 1];
      const fields = this.numStoredFields[i];
      if (length < 0 || fields < 0 || (length === 0) !== (fields === 0)) {
        throw new CorruptIndexException(`chunk ${chunk}: doc ${docBase + i} has length ${length} and ${fields} fields`, name);
      }
      const endOffset = offsets[i] + length;
      if (endOffset > 0x7fffffff) throw new CorruptIndexException(`chunk ${chunk} exceeds 2 GiB of serialized docs`, name);
      offsets[i + 1] = endOffset;
    }
    const total = offsets[n];
    this.sliced = (token & 1) !== 0;
    this.parseUnits(total, input.position, chunk);
    if (this.data.length < total) this.data = new Uint8Array(Math.max(total, Math.min(2 * this.data.length, 1 << 24)));
    // after a huge (sliced) chunk, do not keep its buffer for the ordinary ones
    else if (this.data.length > 1 << 24 && total < this.data.length >>> 2) this.data = new Uint8Array(total);
    this.chunkDocBase = docBase;
    this.chunkDocs = n;
    this.chunk = chunk;
  }

  private parseUnits(total: number, pos: number, chunk: number): void {
    const name = this.fdtSlice.name;
    const count = total === 0 ? 0 : this.sliced ? Math.ceil(total / this.chunkSize) : 1;
    while (this.units.length < count) this.units.push(new CompressedUnit());
    if (this.unitBlockBase.length < count + 1) this.unitBlockBase = new Int32Array(count + 1);
    if (this.dictDecoded.length < count) this.dictDecoded = new Uint8Array(count);
    this.dictDecoded.fill(0, 0, count);
    let blocks = 0;
    for (let u = 0; u < count; u++) {
      const unit = this.units[u];
      const length = this.sliced ? Math.min(this.chunkSize, total - u * this.chunkSize) : total;
      this.compression.parseUnit(this.src, pos, this.srcEnd, length, unit, name);
      pos = unit.end;
      this.unitBlockBase[u] = blocks;
      blocks += unit.numBlocks;
    }
    this.unitBlockBase[count] = blocks;
    if (count > 0 && pos !== this.srcEnd) {
      throw new CorruptIndexException(`chunk ${chunk}: its compressed docs end at ${pos - this.srcStart}, ${this.srcEnd - pos} bytes before the next chunk`, name);
    }
    if (this.blockDecoded.length < blocks) this.blockDecoded = new Uint8Array(blocks);
    this.blockDecoded.fill(0, 0, blocks);
    this.numUnits = count;
    this.scratchUnit = -1;
  }

  /** Decompresses whatever of [from, to) (chunk-relative) is not decompressed yet. */
  private decompress(from: number, to: number): void {
    const name = this.fdtSlice.name;
    for (let u = 0; u < this.numUnits; u++) {
      const unit = this.units[u];
      const unitStart = this.sliced ? u * this.chunkSize : 0;
      const lo = Math.max(from, unitStart) - unitStart;
      const hi = Math.min(to, unitStart + unit.originalLength) - unitStart;
      if (lo >= hi) continue;
      const scratchSize = unit.dictLength + unit.blockLength;
      if (this.scratch.length < scratchSize || (this.scratch.length > 1 << 24 && scratchSize < this.scratch.length >>> 2)) {
        this.scratch = new Uint8Array(scratchSize);
        this.scratchUnit = -1;
      }
      if (!this.dictDecoded[u]) {
        this.compression.decodeDictionary(this.src, unit, this.scratch, name);
        this.data.set(this.scratch.subarray(0, unit.dictLength), unitStart);
        this.dictDecoded[u] = 1;
        this.scratchUnit = u;
      }
      if (hi <= unit.dictLength) continue;
      const first = Math.floor((Math.max(lo, unit.dictLength) - unit.dictLength) / unit.blockLength);
      const last = Math.floor((hi - 1 - unit.dictLength) / unit.blockLength);
      for (let b = first; b <= last; b++) {
        const flag = this.unitBlockBase[u] + b;
        if (this.blockDecoded[flag]) continue;
        if (this.scratchUnit !== u) {
          // the dictionary of this unit must sit right before the block
          this.scratch.set(this.data.subarray(unitStart, unitStart + unit.dictLength), 0);
          this.scratchUnit = u;
        }
        this.compression.decodeBlock(this.src, unit, b, this.scratch, name);
        const size = unit.blockSize(b);
        this.data.set(this.scratch.subarray(unit.dictLength, unit.dictLength + size), unitStart + unit.dictLength + b * unit.blockLength);
        this.blockDecoded[flag] = 1;
      }
    }
  }
}

/** The codec name of an index header, without consuming it (the mode follows from it). */
function peekCodecName(header: ByteArrayDataInput): string {
  const start = header.position;
  header.readBEInt();
  const name = header.readString();
  header.position = start;
  return name;
}

const UTF8 = new TextDecoder('utf-8', { fatal: false });

function readValue(input: ByteArrayDataInput, type: number, fieldNumber: number, visitor: StoredFieldVisitor): void {
  switch (type) {
    case STRING: {
      const length = input.readVInt();
      if (length < 0) throw new CorruptIndexException(`negative string length ${length}`, input.resource);
      const bytes = input.readBytes(length);
      if (visitor.stringField) visitor.stringField(fieldNumber, UTF8.decode(bytes));
      return;
    }
    case BYTE_ARR: {
      const length = input.readVInt();
      if (length < 0) throw new CorruptIndexException(`negative bytes length ${length}`, input.resource);
      const bytes = input.readBytes(length);
      visitor.binaryField?.(fieldNumber, bytes);
      return;
    }
    case NUMERIC_INT:
      visitor.intField?.(fieldNumber, readZInt(input));
      return;
    case NUMERIC_FLOAT:
      visitor.floatField?.(fieldNumber, readZFloat(input));
      return;
    case NUMERIC_LONG:
      visitor.longField?.(fieldNumber, readTLong(input));
      return;
    case NUMERIC_DOUBLE:
      visitor.doubleField?.(fieldNumber, readZDouble(input));
      return;
  }
}

function skipValue(input: ByteArrayDataInput, type: number): void {
  switch (type) {
    case STRING:
    case BYTE_ARR: {
      const length = input.readVInt();
      if (length < 0) throw new CorruptIndexException(`negative length ${length}`, input.resource);
      input.skipBytes(length);
      return;
    }
    case NUMERIC_INT:
      readZInt(input);
      return;
    case NUMERIC_FLOAT:
      readZFloat(input);
      return;
    case NUMERIC_LONG:
      readTLong(input);
      return;
    case NUMERIC_DOUBLE:
      readZDouble(input);
      return;
  }
}
