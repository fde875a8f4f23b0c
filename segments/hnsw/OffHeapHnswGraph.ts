import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { DirectMonotonicReader } from '../packed/DirectMonotonicReader.js';
import type { RandomAccessBytes } from '../store/RandomAccessBytes.js';
import { HNSW_VERSION_GROUPVARINT } from './HnswVectorsFormat.js';
import type { NeighborLists } from './HnswGraph.js';
import { NeighborDecoder, type HnswFieldEntry, type HnswVectorsReader } from './HnswVectorsReader.js';

/**
 * A field's HNSW graph read in place from `.vex` (Lucene's OffHeapHnswGraph), searched by
 * HnswGraphSearcher as NeighborLists: nothing is decoded up front. The neighbour-offset table
 * (DirectMonotonic, a few bits per node) is read where it lies, and a node's list is decoded from
 * the file each time the search expands it: one vint count, then ascending ordinals as deltas (group-varints from version 1, vints in version 0).
 * Upper-level node ordinals come from `.vem` (already on the heap); a node's position on its
 * level is found by binary search, as Lucene does.
 *
 * Memory: the `.vem` node lists of the upper levels (~1/M of the nodes) and, when the bytes come
 * through positioned reads rather than a mapping, a heap copy of the packed offset table
 * (~3 bytes per node); never the neighbour lists.
 */
export class OffHeapHnswGraph implements NeighborLists {
  readonly size: number;
  readonly numLevels: number;
  /** The first node of the top level (Lucene's entry point); 0 for a single level. */
  readonly entryNode: number;
  /** The longest list a valid graph has (Lucene's reader buffer: 2*M). */
  readonly maxListLength: number;
  private readonly offsets: DirectMonotonicReader;
  /** Offset-table index of each level's first node (level 0 starts at 0). */
  private readonly levelStart: Int32Array;
  private readonly totalLists: number;
  private readonly decoder: NeighborDecoder;
  private readonly groupVarint: boolean;
  private readonly dataLength: number;
  private readonly deltas: Int32Array;
  /** NeighborLists: the last seek()'s list, [count, ords...]. */
  readonly lists: Int32Array;

  private constructor(
    readonly entry: HnswFieldEntry,
    version: number,
    readonly vex: RandomAccessBytes,
  ) {
    this.size = entry.size;
    this.numLevels = entry.numLevels;
    const top = entry.numLevels - 1;
    this.entryNode = top > 0 ? entry.nodesByLevel[top]![0] : 0;
    this.maxListLength = 2 * entry.M;
    this.levelStart = new Int32Array(entry.numLevels + 1);
    for (let level = 0, k = 0; level < entry.numLevels; level++) {
      this.levelStart[level] = k;
      k += level === 0 ? entry.size : entry.nodesByLevel[level]!.length;
      this.levelStart[level + 1] = k;
    }
    this.totalLists = this.levelStart[entry.numLevels];
    const table = vex.pin(entry.offsetsOffset, entry.offsetsLength);
    this.offsets = new DirectMonotonicReader(entry.offsetsMeta!, table, 0, table.length, vex.name);
    if (this.offsets.meta.numValues !== this.totalLists) {
      throw new CorruptIndexException(`offset table of field ${entry.fieldNumber} has ${this.offsets.meta.numValues} entries for ${this.totalLists} lists`, vex.name);
    }
    this.groupVarint = version >= HNSW_VERSION_GROUPVARINT;
    this.dataLength = entry.vectorIndexLength;
    this.decoder = new NeighborDecoder(vex.bytes, 0, vex.name);
    this.deltas = new Int32Array(this.maxListLength);
    this.lists = new Int32Array(this.maxListLength + 1);
  }

  /** The field's graph over `vex` (the reader's `.vex`, opened as a mapping or for pread); null when it has none. */
  static open(reader: HnswVectorsReader, fieldNumber: number, vex: RandomAccessBytes): OffHeapHnswGraph | null {
    const entry = reader.field(fieldNumber);
    if (!entry) throw new RangeError(`no HNSW field number ${fieldNumber}`);
    if (entry.numLevels === 0 || entry.size === 0 || entry.vectorIndexLength === 0 || entry.offsetsMeta === null) return null;
    return new OffHeapHnswGraph(entry, reader.version, vex);
  }

  /** Offset-table index of `node` on `level`; -1 when the node is not on it. */
  private listIndex(level: number, node: number): number {
    if (level === 0) return node >= 0 && node < this.size ? node : -1;
    const nodes = this.entry.nodesByLevel[level];
    if (!nodes) return -1;
    let lo = 0;
    let hi = nodes.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = nodes[mid];
      if (v === node) return this.levelStart[level] + mid;
      if (v < node) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Byte range of a node's list in `.vex` (relative to the file): start in `range[0]`, length in `range[1]`. */
  listRange(level: number, node: number, range: Float64Array): void {
    const k = this.listIndex(level, node);
    if (k < 0) throw new RangeError(`node ${node} is not on level ${level}`);
    const start = this.offsets.get(k);
    const end = k + 1 < this.totalLists ? this.offsets.get(k + 1) : this.dataLength;
    if (!(start >= 0 && end >= start && end <= this.dataLength)) {
      throw new CorruptIndexException(`neighbour list ${k} at [${start}, ${end}) outside the graph data (${this.dataLength} bytes)`, this.vex.name);
    }
    range[0] = this.entry.vectorIndexOffset + start;
    range[1] = end - start;
  }

  private readonly range = new Float64Array(2);

  /** NeighborLists: decodes `node`'s list on `level` into `lists` as [count, ascending ordinals] and returns 0. */
  seek(level: number, node: number): number {
    const range = this.range;
    this.listRange(level, node, range);
    const name = this.vex.name;
    const pos = this.vex.load(range[0], range[1]);
    const dec = this.decoder;
    dec.b = this.vex.bytes;
    dec.pos = pos;
    dec.end = pos + range[1];
    const n = dec.vint();
    if (n < 0 || n > this.maxListLength) {
      throw new CorruptIndexException(`neighbour count ${n} of node ${node} on level ${level} exceeds 2*M = ${this.maxListLength}`, name);
    }
    const deltas = this.deltas;
    if (this.groupVarint) dec.groupVInts(deltas, n);
    else for (let j = 0; j < n; j++) deltas[j] = dec.vint();
    const lists = this.lists;
    lists[0] = n;
    let prev = 0;
    for (let j = 0; j < n; j++) {
      const v = j === 0 ? deltas[0] : prev + deltas[j];
      if (v < 0 || v >= this.size) throw new CorruptIndexException(`neighbour ${v} of node ${node} on level ${level} out of [0, ${this.size})`, name);
      lists[j + 1] = v;
      prev = v;
    }
    return 0;
  }

  /** Decodes `node`'s neighbours on `level` into dst[0..n) (ascending ordinals) and returns n. */
  neighbors(level: number, node: number, dst: Int32Array): number {
    this.seek(level, node);
    const n = this.lists[0];
    if (n > dst.length) throw new RangeError(`${n} neighbours do not fit in ${dst.length}`);
    dst.set(this.lists.subarray(1, n + 1));
    return n;
  }

  close(): void {
    this.vex.close();
  }
}
