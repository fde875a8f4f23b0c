import { appendFooter, writeFooter, writeIndexHeader } from '../codec/CodecUtil.js';
import { DirectMonotonicWriter } from '../packed/DirectMonotonicWriter.js';
import type { ByteArrayDataOutput, DataOutput } from '../store/DataOutput.js';
import { IndexOutput } from '../store/IndexOutput.js';
import type { VectorSimilarityFunction } from '../index/VectorSimilarityFunction.js';
import {
  HNSW_DIRECT_MONOTONIC_BLOCK_SHIFT,
  HNSW_INDEX_CODEC,
  HNSW_META_CODEC,
  HNSW_VERSION_CURRENT,
  HNSW_VERSION_GROUPVARINT,
  HNSW_VERSION_START,
  type VectorEncoding,
} from './HnswVectorsFormat.js';
import type { OnHeapHnswGraph } from './OnHeapHnswGraph.js';

export interface HnswFieldInfo {
  readonly fieldNumber: number;
  readonly encoding: VectorEncoding;
  readonly similarity: VectorSimilarityFunction;
  readonly dimension: number;
  /** M written for a field without a graph (a graph writes its own maxConn). Default 16. */
  readonly maxConn?: number;
}

/** A file output (IndexOutput, with running CRC) or an in-memory one (tests). */
export type HnswOutput = IndexOutput | ByteArrayDataOutput;

function filePointer(out: HnswOutput): number {
  return out instanceof IndexOutput ? out.filePointer : out.length;
}

function footer(out: HnswOutput): void {
  if (out instanceof IndexOutput) writeFooter(out);
  else appendFooter(out);
}

/**
 * Writes Lucene99HnswVectorsFormat `.vem` (meta) and `.vex` (graph) for one or more fields,
 * byte-compatible with Lucene99HnswVectorsWriter (field-by-field layout: HnswVectorsFormat.ts):
 *
 * `.vex` per field, level by level from 0, nodes ascending: vint neighbour count (after
 * de-duplication), then the neighbours sorted ascending as deltas (first absolute) — group-varints
 * in version 1, plain vints in version 0. Right after the field's graph comes the DirectMonotonic
 * table of each node's start offset (relative to vectorIndexOffset), level by level.
 *
 * `.vem` per field: int32 field number, int32 encoding, int32 similarity, vlong vectorIndexOffset,
 * vlong vectorIndexLength (graph bytes only), vint dimension, int32 size, vint M, vint numLevels,
 * per upper level vint count + node ordinals (first absolute, then deltas), then int64
 * offsetsOffset, vint blockShift (16), the DirectMonotonic block metas, int64 offsetsLength.
 * A field without a graph writes numLevels 0 and stops there. int32 -1 ends the list.
 */
export class HnswVectorsWriter {
  private finished = false;
  private closed = false;
  private scratch = new Int32Array(64);

  constructor(
    private readonly meta: HnswOutput,
    private readonly index: HnswOutput,
    segmentId: Uint8Array,
    segmentSuffix: string,
    readonly version: number = HNSW_VERSION_CURRENT,
  ) {
    if (version !== HNSW_VERSION_START && version !== HNSW_VERSION_GROUPVARINT) throw new RangeError(`unsupported version ${version}`);
    writeIndexHeader(meta, HNSW_META_CODEC, version, segmentId, segmentSuffix);
    writeIndexHeader(index, HNSW_INDEX_CODEC, version, segmentId, segmentSuffix);
  }

  /** Creates both files (they must not exist). */
  static create(metaPath: string, indexPath: string, segmentId: Uint8Array, segmentSuffix: string, version = HNSW_VERSION_CURRENT): HnswVectorsWriter {
    const meta = new IndexOutput(metaPath);
    let index: IndexOutput | undefined;
    try {
      index = new IndexOutput(indexPath);
      return new HnswVectorsWriter(meta, index, segmentId, segmentSuffix, version);
    } catch (e) {
      meta.abort();
      index?.abort();
      throw e;
    }
  }

  /**
   * Writes one field. `graph` null (or empty) means no graph: the segment is searched exhaustively.
   * Otherwise graph.size() must equal `size`.
   */
  writeField(field: HnswFieldInfo, size: number, graph: OnHeapHnswGraph | null): void {
    if (this.finished) throw new Error('writer already finished');
    if (graph && graph.size() === 0) graph = null;
    if (graph && graph.size() !== size) throw new RangeError(`graph has ${graph.size()} nodes but the field has ${size} vectors`);
    const vectorIndexOffset = filePointer(this.index);
    const levelOffsets = graph ? this.writeGraph(graph) : [];
    const vectorIndexLength = filePointer(this.index) - vectorIndexOffset;

    const m = this.meta;
    m.writeInt(field.fieldNumber);
    m.writeInt(field.encoding);
    m.writeInt(field.similarity.ordinal);
    m.writeVLong(vectorIndexOffset);
    m.writeVLong(vectorIndexLength);
    m.writeVInt(field.dimension);
    m.writeInt(size);
    m.writeVInt(graph ? graph.maxConn : (field.maxConn ?? 16));
    if (!graph) {
      m.writeVInt(0);
      return;
    }
    const numLevels = graph.numLevels;
    m.writeVInt(numLevels);
    let valueCount = size;
    for (let level = 1; level < numLevels; level++) {
      const nodes = graph.getNodesOnLevel(level);
      valueCount += nodes.length;
      m.writeVInt(nodes.length);
      for (let i = 0; i < nodes.length; i++) m.writeVInt(i === 0 ? nodes[0] : nodes[i] - nodes[i - 1]);
    }
    const start = filePointer(this.index);
    m.writeLong(start);
    m.writeVInt(HNSW_DIRECT_MONOTONIC_BLOCK_SHIFT);
    const offsets = DirectMonotonicWriter.getInstance(m, this.index, valueCount, HNSW_DIRECT_MONOTONIC_BLOCK_SHIFT);
    let cumulative = 0;
    for (const lengths of levelOffsets) {
      for (let i = 0; i < lengths.length; i++) {
        offsets.add(cumulative);
        cumulative += lengths[i];
      }
    }
    offsets.finish();
    m.writeLong(filePointer(this.index) - start);
  }

  /** Writes every level's neighbour lists; returns the byte length of each node's entry, per level. */
  private writeGraph(graph: OnHeapHnswGraph): Int32Array[] {
    const out: DataOutput = this.index;
    const size = graph.size();
    const result: Int32Array[] = [];
    for (let level = 0; level < graph.numLevels; level++) {
      const nodes = graph.getNodesOnLevel(level);
      const lengths = new Int32Array(nodes.length);
      const store = graph.store(level);
      const adj = store.adj;
      const stride = store.stride;
      for (let i = 0; i < nodes.length; i++) {
        const base = graph.slot(level, nodes[i]) * stride;
        const cnt = adj[base];
        if (this.scratch.length < cnt) this.scratch = new Int32Array(cnt * 2);
        const s = this.scratch;
        for (let j = 0; j < cnt; j++) s[j] = adj[base + 1 + j];
        s.subarray(0, cnt).sort();
        // de-duplicate and delta-encode in place
        let n = 0;
        let prev = 0;
        for (let j = 0; j < cnt; j++) {
          const v = s[j];
          if (v < 0 || v >= size) throw new RangeError(`neighbour ${v} of node ${nodes[i]} out of [0, ${size})`);
          if (n > 0 && v === prev) continue;
          s[n] = n === 0 ? v : v - prev;
          n++;
          prev = v;
        }
        const before = filePointer(this.index);
        out.writeVInt(n);
        if (this.version >= HNSW_VERSION_GROUPVARINT) out.writeGroupVInts(s, n);
        else for (let j = 0; j < n; j++) out.writeVInt(s[j]);
        lengths[i] = filePointer(this.index) - before;
      }
      result.push(lengths);
    }
    return result;
  }

  /** Ends the field list and writes both footers. */
  finish(): void {
    if (this.finished) throw new Error('already finished');
    this.finished = true;
    this.meta.writeInt(-1);
    footer(this.meta);
    footer(this.index);
  }

  /** Finishes if needed, then flushes, fsyncs and closes file outputs. */
  close(): void {
    if (this.closed) return;
    if (!this.finished) this.finish();
    this.closed = true;
    if (this.meta instanceof IndexOutput) this.meta.close();
    if (this.index instanceof IndexOutput) this.index.close();
  }

  /** Closes file outputs without a footer (the caller deletes the files). */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.meta instanceof IndexOutput) this.meta.abort();
    if (this.index instanceof IndexOutput) this.index.abort();
  }
}
