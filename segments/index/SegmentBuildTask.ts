import { MappedFile } from '../store/native/MappedFile.js';
import { VectorSimilarityFunction } from './VectorSimilarityFunction.js';
import { quantizeField, quantizationSettings, writeQuantizedField, type FloatVectorSource, type QuantizationOptions } from '../quantized/ScalarQuantizedVectorsWriter.js';
import { buildSegmentGraph } from './buildSegmentGraph.js';
import { threadKernels } from '../kernels/threadKernels.js';
import type { MergedGraphs } from './buildSegmentGraph.js';

export interface SegmentBuildArgs {
  readonly dir: string;
  readonly name: string;
  readonly id: Uint8Array;
  readonly suffix: string;
  readonly fieldNumber: number;
  readonly similarity: number;
  readonly dims: number;
  readonly count: number;
  /** The segment's `.vec` (already written by the main thread) and where ord 0 starts in it. */
  readonly vecPath: string;
  readonly vecOffset: number;
  readonly buildGraph: boolean;
  readonly m: number;
  readonly beamWidth: number;
  /** HnswGraphBuilderOptions.minLevel0Connections. */
  readonly minConnections: number;
  readonly seed: number;
  /** How the codes are made (doc bits, centroid rule, rotation); default Lucene's 1-bit format. */
  readonly quantization?: QuantizationOptions;
  /** Shared progress counters: [vectors quantized, graph nodes inserted], summed over segments. */
  readonly progress: Int32Array;
}

export interface SegmentBuildResult {
  readonly hasGraph: boolean;
  readonly quantizeMs: number;
  readonly graphMs: number;
}

/**
 * Runs `buildSegment` somewhere (the service passes one that runs it on an executor worker):
 * builders take one as an argument instead of reaching for a process-wide pool.
 */
export type SegmentBuilder = (args: SegmentBuildArgs) => Promise<SegmentBuildResult>;

/**
 * The segment build (run as executor task `index.buildSegment`): given a segment whose fp32 `.vec/.vemf` are written,
 * quantize every vector to 1 bit against the segment centroid and write `.veq/.vemq`, then (for
 * segments above the flat threshold) build the HNSW graph with the 1-bit scorer and write
 * `.vem/.vex`. The raw vectors are read through a read-only mapping (no copy into the heap).
 * `merged`: the graph starts from a merge's input graphs (in the same task; see buildSegmentGraph).
 */
export async function buildSegment(args: SegmentBuildArgs, merged: MergedGraphs | null = null): Promise<SegmentBuildResult> {
  const similarity = VectorSimilarityFunction.fromOrdinal(args.similarity);
  const byteSize = args.dims * 4;
  const mapped = args.count > 0 ? MappedFile.open(args.vecPath, args.vecOffset, args.count * byteSize, { advice: 'sequential' }) : null;
  try {
    // Chunked views: a segment's vectors may exceed the 4 GiB a single view can cover.
    const source: FloatVectorSource = {
      size: args.count,
      dims: args.dims,
      vector: (ord) => {
        const rel = ord * byteSize;
        const c = mapped!.chunkIndex(rel);
        const first = (rel - mapped!.chunkStart(c)) >>> 2;
        return mapped!.chunkFloats(c).subarray(first, first + args.dims);
      },
    };
    const t0 = performance.now();
    let reported = 0;
    const quantized = quantizeField(source, similarity, {
      settings: quantizationSettings(args.quantization),
      kernels: await threadKernels(),
      withQueryRecords: args.buildGraph,
      onProgress: (done) => {
        Atomics.add(args.progress, 0, done - reported);
        reported = done;
      },
    });
    writeQuantizedField(
      args.dir,
      args.name,
      args.id,
      args.suffix,
      { fieldNumber: args.fieldNumber, similarity, dims: args.dims, count: args.count, maxDoc: args.count },
      quantized,
    );
    const t1 = performance.now();
    if (args.buildGraph) {
      await buildSegmentGraph(args, similarity, quantized, (inserted) => Atomics.add(args.progress, 1, inserted), merged);
    }
    return { hasGraph: args.buildGraph, quantizeMs: t1 - t0, graphMs: performance.now() - t1 };
  } finally {
    mapped?.close();
  }
}
