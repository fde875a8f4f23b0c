import { checkDataFileStructure, checkIndexHeader, checksumEntireFile, FOOTER_LENGTH, indexHeaderLength, openChecksummed } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { DirectMonotonicMeta, DirectMonotonicReader } from '../packed/DirectMonotonicReader.js';
import { ByteArrayDataInput } from '../store/DataInput.js';
import { readSliceBytes, type FileSlice } from '../store/FileSlice.js';
import { MappedFile } from '../store/native/MappedFile.js';
import { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import {
  HNSW_INDEX_CODEC,
  HNSW_INDEX_EXTENSION,
  HNSW_META_CODEC,
  HNSW_META_EXTENSION,
  HNSW_VERSION_CURRENT,
  HNSW_VERSION_GROUPVARINT,
  HNSW_VERSION_START,
  type VectorEncoding,
} from './HnswVectorsFormat.js';
import { OnHeapHnswGraph } from './OnHeapHnswGraph.js';

export { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION } from './HnswVectorsFormat.js';

/** One field's `.vem` entry (Lucene99HnswVectorsReader.FieldEntry). */
export interface HnswFieldEntry {
  readonly fieldNumber: number;
  readonly encoding: VectorEncoding;
  readonly similarity: VectorSimilarityFunction;
  readonly vectorIndexOffset: number;
  readonly vectorIndexLength: number;
  readonly dimension: number;
  readonly size: number;
  readonly M: number;
  readonly numLevels: number;
  /** Sorted node ordinals of each level; index 0 is null (level 0 holds every node). */
  readonly nodesByLevel: readonly (Int32Array | null)[];
  readonly offsetsOffset: number;
  readonly offsetsBlockShift: number;
  readonly offsetsMeta: DirectMonotonicMeta | null;
  readonly offsetsLength: number;
}

const MAX_M = 512;

/** Where the `.vex` bytes come from: a file slice (positioned reads) or an in-memory image. */
interface IndexSource {
  readonly name: string;
  readonly length: number;
  read(offset: number, length: number): Uint8Array;
  /** Runs `use` over the whole file's bytes once their CRC32 matched the footer. */
  withVerified(use: (bytes: Uint8Array) => void): void;
  checksumAll(): void;
}

/**
 * Where decoded neighbour lists go: per level, an Int32Array of `stride`-int slots
 * `[count, ords...]`, slot i holding the i-th node of the level (ascending node order; on level
 * 0 slot == node).
 */
export interface GraphListsTarget {
  level(level: number): { readonly adj: Int32Array; readonly stride: number };
}

/**
 * Reads Lucene99HnswVectorsFormat `.vem` + `.vex` (versions 0 and 1).
 *
 * Opening verifies `.vem` completely (header with codec, version, segment id and suffix; full
 * CRC32; every field entry) and `.vex` structurally (header, same version as `.vem`, footer
 * magic); checkIntegrity() runs the full `.vex` CRC. graph(field) loads that field's graph into a
 * resident OnHeapHnswGraph with one bulk read of its `.vex` range and caches it; every offset,
 * count and neighbour ordinal is range-checked while decoding. Failures throw
 * CorruptIndexException naming the file.
 *
 * The entry node of a loaded graph is the first (smallest) node of its top level, as Lucene's
 * OffHeapHnswGraph does (node 0 when there is a single level).
 */
export class HnswVectorsReader {
  private readonly graphs = new Map<number, OnHeapHnswGraph | null>();

  private constructor(
    readonly version: number,
    readonly fields: ReadonlyMap<number, HnswFieldEntry>,
    private readonly index: IndexSource,
    private readonly checkMeta: () => void,
  ) {}

  /** Opens the two files (plain files or compound sub-files); graphs load on first use. */
  static open(meta: FileSlice, index: FileSlice, segmentId: Uint8Array, segmentSuffix: string): HnswVectorsReader {
    const metaBytes = readSliceBytes(meta);
    const header = checkDataFileStructure(index, HNSW_INDEX_CODEC, HNSW_VERSION_START, HNSW_VERSION_CURRENT, segmentId, segmentSuffix);
    const source: IndexSource = {
      name: index.name,
      length: index.length,
      read: (offset, length) => readSliceBytes(index, offset, length),
      withVerified: (use) => {
        // Mapped, not read into the heap: one sequential pass over file-backed pages (no
        // transient anonymous copy of the file), dropped again when the mapping closes.
        const file = MappedFile.open(index.path, index.offset, index.length, { advice: 'sequential' });
        try {
          const bytes = file.bytes();
          openChecksummed(bytes, index.name);
          use(bytes);
        } finally {
          file.close();
        }
      },
      checksumAll: () => void checksumEntireFile(index),
    };
    return HnswVectorsReader.load(metaBytes, meta.name, source, header.version, indexHeaderLength(HNSW_INDEX_CODEC, segmentSuffix), segmentId, segmentSuffix, () =>
      checksumEntireFile(meta),
    );
  }

  /** Same as open(): verifies `.vem` and the `.vex` structure without reading the graph. */
  static openMeta(meta: FileSlice, index: FileSlice, segmentId: Uint8Array, segmentSuffix: string): HnswVectorsReader {
    return HnswVectorsReader.open(meta, index, segmentId, segmentSuffix);
  }

  /** Reads in-memory file images (tests, compound-file extraction). */
  static fromBytes(metaBytes: Uint8Array, indexBytes: Uint8Array, segmentId: Uint8Array, segmentSuffix: string, names: { meta?: string; index?: string } = {}): HnswVectorsReader {
    const metaName = names.meta ?? `${segmentSuffix}.${HNSW_META_EXTENSION}`;
    const indexName = names.index ?? `${segmentSuffix}.${HNSW_INDEX_EXTENSION}`;
    const input = new ByteArrayDataInput(indexBytes, indexName);
    const header = checkIndexHeader(input, HNSW_INDEX_CODEC, HNSW_VERSION_START, HNSW_VERSION_CURRENT, segmentId, segmentSuffix);
    checkFooterStructure(indexBytes, indexName);
    const source: IndexSource = {
      name: indexName,
      length: indexBytes.length,
      read: (offset, length) => indexBytes.subarray(offset, offset + length),
      withVerified: (use) => {
        openChecksummed(indexBytes, indexName);
        use(indexBytes);
      },
      checksumAll: () => void openChecksummed(indexBytes, indexName),
    };
    return HnswVectorsReader.load(metaBytes, metaName, source, header.version, input.position, segmentId, segmentSuffix, () => openChecksummed(metaBytes, metaName));
  }

  private static load(
    metaBytes: Uint8Array,
    metaName: string,
    index: IndexSource,
    indexVersion: number,
    dataStart: number,
    segmentId: Uint8Array,
    segmentSuffix: string,
    checkMeta: () => void,
  ): HnswVectorsReader {
    const meta = openChecksummed(metaBytes, metaName);
    const { version } = checkIndexHeader(meta, HNSW_META_CODEC, HNSW_VERSION_START, HNSW_VERSION_CURRENT, segmentId, segmentSuffix);
    if (indexVersion !== version) {
      throw new CorruptIndexException(`Format versions mismatch: meta=${version}, ${HNSW_INDEX_CODEC}=${indexVersion}`, index.name);
    }
    const fields = new Map<number, HnswFieldEntry>();
    const dataEnd = index.length - FOOTER_LENGTH;
    for (let fieldNumber = meta.readInt(); fieldNumber !== -1; fieldNumber = meta.readInt()) {
      if (fieldNumber < 0) throw new CorruptIndexException(`invalid field number ${fieldNumber}`, metaName);
      if (fields.has(fieldNumber)) throw new CorruptIndexException(`duplicate field number ${fieldNumber}`, metaName);
      const entry = readField(meta, fieldNumber);
      checkRanges(entry, dataStart, dataEnd, index.name);
      fields.set(fieldNumber, entry);
    }
    if (!meta.eof()) throw new CorruptIndexException(`${meta.remaining} unexpected bytes after the field list`, metaName);
    return new HnswVectorsReader(version, fields, index, checkMeta);
  }

  field(fieldNumber: number): HnswFieldEntry | undefined {
    return this.fields.get(fieldNumber);
  }

  /**
   * The field's graph, loaded on first call (one read of the field's `.vex` range) and kept;
   * null when the field has no graph (search it exhaustively).
   */
  graph(fieldNumber: number): OnHeapHnswGraph | null {
    const entry = this.fields.get(fieldNumber);
    if (!entry) throw new RangeError(`no HNSW field number ${fieldNumber}`);
    let g = this.graphs.get(fieldNumber);
    if (g === undefined) {
      g = loadGraph(entry, this.version, this.index);
      this.graphs.set(fieldNumber, g);
    }
    return g;
  }

  /**
   * The field's graph decoded from the whole `.vex`, read once and checked against its CRC32
   * first (a merge that takes a segment's graph over reads it this way); not kept. Null when the
   * field has no graph.
   */
  verifiedGraph(fieldNumber: number): OnHeapHnswGraph | null {
    const entry = this.fields.get(fieldNumber);
    if (!entry) throw new RangeError(`no HNSW field number ${fieldNumber}`);
    if (!hasGraph(entry)) return null;
    let graph: OnHeapHnswGraph | null = null;
    this.index.withVerified((bytes) => {
      graph = decodeGraph(entry, this.version, bytes, 0, this.index.name);
    });
    return graph;
  }

  /**
   * Reads the whole `.vex` once (mapped), checking its CRC32, and decodes the field's neighbour
   * lists straight into `target` (e.g. an arena: no graph object on the heap). Returns
   * false when the field has no graph. Lists hold at most 2M ords (so a stride of 2M + 1 fits).
   */
  loadGraphInto(fieldNumber: number, target: GraphListsTarget): boolean {
    const entry = this.fields.get(fieldNumber);
    if (!entry) throw new RangeError(`no HNSW field number ${fieldNumber}`);
    if (!hasGraph(entry)) return false;
    this.index.withVerified((bytes) => decodeLists(entry, this.version, bytes, 0, this.index.name, target));
    return true;
  }

  /** Full CRC32 verification of both files (Lucene's checkIntegrity). */
  checkIntegrity(): void {
    this.checkMeta();
    this.index.checksumAll();
  }
}

function readField(meta: ByteArrayDataInput, fieldNumber: number): HnswFieldEntry {
  const r = meta.resource;
  const encoding = meta.readInt();
  if (encoding !== 0 && encoding !== 1) throw new CorruptIndexException(`Invalid vector encoding id: ${encoding}`, r);
  const simOrd = meta.readInt();
  if (simOrd < 0 || simOrd >= VectorSimilarityFunction.values.length) throw new CorruptIndexException(`invalid distance function: ${simOrd}`, r);
  const similarity = VectorSimilarityFunction.fromOrdinal(simOrd);
  const vectorIndexOffset = meta.readVLong();
  const vectorIndexLength = meta.readVLong();
  const dimension = meta.readVInt();
  if (dimension <= 0) throw new CorruptIndexException(`invalid vector dimension ${dimension} for field ${fieldNumber}`, r);
  const size = meta.readInt();
  if (size < 0) throw new CorruptIndexException(`invalid vector count ${size} for field ${fieldNumber}`, r);
  const M = meta.readVInt();
  if (M <= 0 || M > MAX_M) throw new CorruptIndexException(`invalid maxConn ${M} for field ${fieldNumber}`, r);
  const numLevels = meta.readVInt();
  if (numLevels < 0 || numLevels > 64) throw new CorruptIndexException(`invalid numLevels ${numLevels} for field ${fieldNumber}`, r);
  const nodesByLevel: (Int32Array | null)[] = [null];
  let numberOfOffsets = numLevels > 0 ? size : 0;
  for (let level = 1; level < numLevels; level++) {
    const count = meta.readVInt();
    if (count <= 0 || count > size) throw new CorruptIndexException(`invalid node count ${count} on level ${level} of field ${fieldNumber}`, r);
    const nodes = new Int32Array(count);
    let prev = -1;
    for (let i = 0; i < count; i++) {
      const v = meta.readVInt();
      const node = i === 0 ? v : prev + v;
      if (node < 0 || node >= size || (i > 0 && node <= prev)) {
        throw new CorruptIndexException(`invalid node ${node} on level ${level} of field ${fieldNumber}`, r);
      }
      nodes[i] = node;
      prev = node;
    }
    nodesByLevel.push(nodes);
    numberOfOffsets += count;
  }
  let offsetsOffset = 0;
  let offsetsBlockShift = 0;
  let offsetsMeta: DirectMonotonicMeta | null = null;
  let offsetsLength = 0;
  if (numberOfOffsets > 0) {
    offsetsOffset = meta.readLong();
    offsetsBlockShift = meta.readVInt();
    offsetsMeta = DirectMonotonicMeta.load(meta, numberOfOffsets, offsetsBlockShift);
    offsetsLength = meta.readLong();
  }
  return {
    fieldNumber,
    encoding: encoding as VectorEncoding,
    similarity,
    vectorIndexOffset,
    vectorIndexLength,
    dimension,
    size,
    M,
    numLevels,
    nodesByLevel,
    offsetsOffset,
    offsetsBlockShift,
    offsetsMeta,
    offsetsLength,
  };
}

function checkFooterStructure(bytes: Uint8Array, name: string): void {
  if (bytes.length < FOOTER_LENGTH) throw new CorruptIndexException(`misplaced codec footer (file truncated?): length=${bytes.length}`, name);
  const dv = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - FOOTER_LENGTH, FOOTER_LENGTH);
  if (dv.getUint32(0, false) !== 0xc02893e8 || dv.getInt32(4, false) !== 0 || dv.getUint32(8, false) !== 0) {
    throw new CorruptIndexException('codec footer mismatch (file truncated?)', name);
  }
}

/**
 * Cursor-based decoding of the `.vex` neighbour lists (bounds-checked against `end`). The off-heap
 * graph points one decoder at each list it reads (`b`, `pos`, `end` are reassigned per list).
 */
export class NeighborDecoder {
  pos = 0;

  constructor(
    public b: Uint8Array,
    public end: number,
    private readonly name: string,
  ) {}

  private fail(what: string): never {
    throw new CorruptIndexException(`${what} at offset ${this.pos} runs past the field's graph data (end ${this.end})`, this.name);
  }

  vint(): number {
    const b = this.b;
    let p = this.pos;
    if (p >= this.end) this.fail('vint');
    let x = b[p++];
    let v = x & 0x7f;
    for (let shift = 7; x & 0x80; shift += 7) {
      if (shift > 28) throw new CorruptIndexException(`invalid vint at offset ${this.pos}`, this.name);
      if (p >= this.end) this.fail('vint');
      x = b[p++];
      v |= (x & 0x7f) << shift;
    }
    this.pos = p;
    return v | 0;
  }

  /** count values: group-varints for full groups of 4, vints for the tail. */
  groupVInts(dst: Int32Array, count: number): void {
    const b = this.b;
    let i = 0;
    for (; i + 4 <= count; i += 4) {
      let p = this.pos;
      if (p >= this.end) this.fail('group-varint');
      const flag = b[p++];
      const need = ((flag >>> 6) & 3) + ((flag >>> 4) & 3) + ((flag >>> 2) & 3) + (flag & 3) + 4;
      if (p + need > this.end) this.fail('group-varint');
      for (let j = 0; j < 4; j++) {
        const n = ((flag >>> (6 - 2 * j)) & 3) + 1;
        let v = b[p];
        if (n > 1) v |= b[p + 1] << 8;
        if (n > 2) v |= b[p + 2] << 16;
        if (n > 3) v |= b[p + 3] << 24;
        dst[i + j] = v;
        p += n;
      }
      this.pos = p;
    }
    for (; i < count; i++) dst[i] = this.vint();
  }
}

/** The graph and offset ranges of a field must lie between the `.vex` header and footer. */
function checkRanges(entry: HnswFieldEntry, dataStart: number, dataEnd: number, name: string): void {
  const { vectorIndexOffset, vectorIndexLength, fieldNumber } = entry;
  if (vectorIndexOffset < dataStart || vectorIndexOffset + vectorIndexLength > dataEnd) {
    throw new CorruptIndexException(`graph data [${vectorIndexOffset}, ${vectorIndexOffset + vectorIndexLength}) of field ${fieldNumber} outside [${dataStart}, ${dataEnd})`, name);
  }
  if (entry.offsetsMeta !== null && (entry.offsetsOffset < dataStart || entry.offsetsLength < 0 || entry.offsetsOffset + entry.offsetsLength > dataEnd)) {
    throw new CorruptIndexException(`neighbour offsets [${entry.offsetsOffset}, +${entry.offsetsLength}) of field ${fieldNumber} outside [${dataStart}, ${dataEnd})`, name);
  }
}

/** False for a field stored without a graph (searched exhaustively). */
export function hasGraph(entry: HnswFieldEntry): boolean {
  return !(entry.numLevels === 0 || entry.size === 0 || entry.vectorIndexLength === 0 || entry.offsetsMeta === null);
}

/** The level-0 entry point of a loaded graph: the first node of the top level (node 0 with one level). */
export function entryNodeOf(entry: HnswFieldEntry): number {
  const top = entry.numLevels - 1;
  return top > 0 ? entry.nodesByLevel[top]![0] : 0;
}

function loadGraph(entry: HnswFieldEntry, version: number, index: IndexSource): OnHeapHnswGraph | null {
  if (!hasGraph(entry)) return null;
  // one read covering the neighbour lists and the offset table that follows them
  const lo = Math.min(entry.vectorIndexOffset, entry.offsetsOffset);
  const hi = Math.max(entry.vectorIndexOffset + entry.vectorIndexLength, entry.offsetsOffset + entry.offsetsLength);
  return decodeGraph(entry, version, index.read(lo, hi - lo), lo, index.name);
}

/** `bytes` holds the file range starting at absolute offset `base`. */
function decodeGraph(entry: HnswFieldEntry, version: number, bytes: Uint8Array, base: number, name: string): OnHeapHnswGraph {
  const { size, numLevels } = entry;
  // Lucene's reader decodes into a buffer of 2*M ints, so no valid graph has longer lists
  const cap = 2 * entry.M;
  const graph = new OnHeapHnswGraph({ maxConn: entry.M, expectedSize: size, withScores: false, capacity0: cap, capacityUpper: cap });
  graph.addNode(0, size - 1);
  for (let level = 1; level < numLevels; level++) {
    const nodes = entry.nodesByLevel[level]!;
    for (let i = 0; i < nodes.length; i++) graph.addNode(level, nodes[i]);
  }
  // upper-level slots follow insertion order, which is the level's ascending node order
  decodeLists(entry, version, bytes, base, name, { level: (level) => graph.store(level) });
  graph.setEntryNode(entryNodeOf(entry), numLevels - 1);
  return graph;
}

/** Decodes every level's lists into `target`, range-checking offsets, counts and ords. */
function decodeLists(entry: HnswFieldEntry, version: number, bytes: Uint8Array, base: number, name: string, target: GraphListsTarget): void {
  const { size, numLevels, fieldNumber } = entry;
  const vectorIndexOffset = entry.vectorIndexOffset - base;
  const vectorIndexLength = entry.vectorIndexLength;
  // Read entry by entry (no decoded copy of the table: loading stays within the target's memory).
  const offsets = new DirectMonotonicReader(entry.offsetsMeta!, bytes, entry.offsetsOffset - base, entry.offsetsLength, name);
  const entries = entry.offsetsMeta!.numValues;
  if (entries !== size + entry.nodesByLevel.reduce((a, l) => a + (l ? l.length : 0), 0)) {
    throw new CorruptIndexException(`offset table of field ${fieldNumber} has ${entries} entries`, name);
  }
  const dec = new NeighborDecoder(bytes, vectorIndexOffset + vectorIndexLength, name);
  const cap = 2 * entry.M;
  const buf = new Int32Array(cap);
  const groupVarint = version >= HNSW_VERSION_GROUPVARINT;
  let k = 0;
  for (let level = 0; level < numLevels; level++) {
    const nodes = entry.nodesByLevel[level];
    const count = level === 0 ? size : nodes!.length;
    const { adj, stride } = target.level(level);
    if (stride < cap + 1 || adj.length < count * stride) throw new RangeError(`level ${level} target holds ${adj.length} ints, needs ${count} x ${cap + 1}`);
    for (let i = 0; i < count; i++, k++) {
      const node = level === 0 ? i : nodes![i];
      const off = offsets.get(k);
      if (!(off >= 0 && off < vectorIndexLength)) {
        throw new CorruptIndexException(`neighbour offset ${off} of entry ${k} outside the graph data (${vectorIndexLength} bytes)`, name);
      }
      dec.pos = vectorIndexOffset + off;
      const n = dec.vint();
      if (n < 0 || n > cap) throw new CorruptIndexException(`neighbour count ${n} of node ${node} on level ${level} exceeds 2*M = ${cap}`, name);
      if (groupVarint) dec.groupVInts(buf, n);
      else for (let j = 0; j < n; j++) buf[j] = dec.vint();
      const at = i * stride;
      adj[at] = n;
      let prev = 0;
      for (let j = 0; j < n; j++) {
        const v = j === 0 ? buf[0] : prev + buf[j];
        if (v < 0 || v >= size) throw new CorruptIndexException(`neighbour ${v} of node ${node} on level ${level} out of [0, ${size})`, name);
        adj[at + 1 + j] = v;
        prev = v;
      }
    }
  }
}
