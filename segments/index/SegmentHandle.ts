import type { ResidentGraphLayout } from '../hnsw/ResidentGraph.js';
import type { WasmMemory } from '../kernels/wasmApi.js';
import type { FileSlice } from '../store/FileSlice.js';
import type { DocBits } from '../quantized/ScalarEncodings.js';

/**
 * Everything an executor worker needs to open one segment's vector field by itself: plain data
 * plus typed arrays backed by SharedArrayBuffers (cloning a task then copies no bulk data).
 * Workers cache what they open under `key`, so a segment is opened once per worker thread.
 */
export interface SegmentHandle {
  /** Unique per opened segment: the open index, segment name and segment id. */
  readonly key: string;
  /** The open index this segment belongs to (see releaseBoard: closing it frees worker resources). */
  readonly indexId: number;
  readonly name: string;
  readonly maxDoc: number;
  readonly dims: number;
  /** The field's similarity ordinal. */
  readonly similarity: number;
  readonly vectors: VectorDataHandle;
  /** The 1-bit codes (`.veq` records); null when the segment has no vectors. */
  readonly quantized: QuantizedDataHandle | null;
  /** The HNSW graph files; null for flat (exhaustively scanned) segments. */
  readonly graph: GraphHandle | null;
  /**
   * Live ords as a bitset of 32-bit words (ord o is live when bit o&31 of word o>>>5 is set);
   * null when every ord is live. Deleted docs are never returned by the first phase.
   */
  readonly liveOrds: Uint32Array | null;
  /**
   * Where the segment's codes and graph are held for the whole process (an arena every worker
   * imports, filled when the index opened); null when each worker is to load a copy of its own
   * (a reader searched without openIndex, e.g. in tests).
   */
  readonly resident: ResidentSegment | null;
  /**
   * Names the segment's immutable data (its files, not its live docs) across readers: readers
   * whose segments have equal keys share one resident copy of its codes and graph (Lucene's
   * SegmentCoreReaders, shared by the readers `openIfChanged` returns). Null: never shared.
   */
  readonly coreKey: string | null;
}

/** A shared WebAssembly memory holding whole segments (see Arena.ts); structured-cloneable. */
export interface ArenaRef {
  /** Unique in the process: `${releaseId}.${ordinal}`. */
  readonly key: string;
  /**
   * The id whose release (releaseBoard) makes every thread drop its instance over this arena:
   * published once no open reader holds a segment in it (ResidentCores).
   */
  readonly releaseId: number;
  readonly memory: WasmMemory;
  /** Bytes of segment data at the start of the memory; workers' scratch regions follow. */
  readonly dataBytes: number;
  /** Bytes of scratch each worker claims at the end of the arena when it first searches it. */
  readonly scratchBytes: number;
}

/** A segment's place in an arena (byte addresses in its memory). */
export interface ResidentSegment {
  readonly arena: ArenaRef;
  /** Record 0 of the 1-bit codes (count x recordBytes, as in the `.veq`). */
  readonly records: number;
  readonly graph: ResidentGraphLayout | null;
  readonly bytes: { readonly codes: number; readonly graph: number };
}

/**
 * A data file as a worker opens it. `path` names it (messages); `fd`, when set, is a descriptor
 * the open reader holds on it: workers are threads of the reader's process, so they open
 * `/proc/self/fd/<fd>` and reach the very file the reader opened, even after a rebuild in place
 * has deleted or replaced `path`. The reader closes the fd when it closes, after its searches.
 */
export interface HeldFile {
  readonly path: string;
  readonly fd?: number;
}

/** Where a worker opens a held file (see HeldFile). */
export function openablePath(file: HeldFile): string {
  return file.fd === undefined ? file.path : `/proc/self/fd/${file.fd}`;
}

export interface VectorDataHandle extends HeldFile {
  /** The physical file holding the fp32 vectors (a `.vec`, or a Lucene `.cfs`). */
  readonly path: string;
  /** Absolute byte offset of ord 0 in that file. */
  readonly offset: number;
  /** Bytes per vector (dims x 4). */
  readonly byteSize: number;
  /** Number of vectors (ords). */
  readonly size: number;
  /** ord -> segment doc; null when dense (ord == doc). */
  readonly ordToDoc: Int32Array | null;
}

export interface QuantizedDataHandle extends HeldFile {
  /** The whole `.veq` file (its CRC32 footer is checked when the records are loaded). */
  readonly file: FileSlice;
  readonly path: string;
  /** Absolute byte offset of record 0. */
  readonly offset: number;
  readonly count: number;
  readonly codeBytes: number;
  readonly recordBytes: number;
  readonly centroid: Float32Array;
  readonly centroidDP: number;
  /** Doc bits per dimension (the ScalarEncoding): 1 for SINGLE_BIT_QUERY_NIBBLE. */
  readonly bits: DocBits;
  /** The RandomizedHadamard seed the codes were rotated with; null: not rotated (Lucene's format). */
  readonly rotationSeed: bigint | null;
}

export interface GraphHandle {
  readonly vem: FileSlice;
  readonly vex: FileSlice;
  readonly segmentId: Uint8Array;
  readonly suffix: string;
  readonly fieldNumber: number;
}

/** Copies a typed array into SharedArrayBuffer-backed memory (so task arguments share it). */
export function shared<T extends Int32Array | Float32Array | Uint8Array | Uint32Array>(array: T): T {
  const Ctor = array.constructor as new (buffer: SharedArrayBuffer) => T;
  const out = new Ctor(new SharedArrayBuffer(array.byteLength));
  out.set(array as never);
  return out;
}

/** Maps a segment doc to its ord: identity when dense, binary search in ordToDoc when sparse; -1 if the doc has no vector. */
export function docToOrd(vectors: VectorDataHandle, doc: number): number {
  const table = vectors.ordToDoc;
  if (table === null) return doc < vectors.size ? doc : -1;
  let lo = 0,
    hi = table.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const d = table[mid];
    if (d === doc) return mid;
    if (d < doc) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export function ordToDoc(vectors: VectorDataHandle, ord: number): number {
  return vectors.ordToDoc === null ? ord : vectors.ordToDoc[ord];
}
