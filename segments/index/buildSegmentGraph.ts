import { join } from 'node:path';
import { threadKernels } from '../kernels/threadKernels.js';
import type { VectorSimilarityFunction } from './VectorSimilarityFunction.js';
import { segmentFileName, VectorEncoding } from '../flat/FlatVectorsFormat.js';
import { HnswGraphBuilder } from '../hnsw/HnswGraphBuilder.js';
import { HNSW_INDEX_EXTENSION, HNSW_META_EXTENSION } from '../hnsw/HnswVectorsFormat.js';
import { HnswVectorsWriter } from '../hnsw/HnswVectorsWriter.js';
import type { QuantizedField } from '../quantized/ScalarQuantizedVectorsWriter.js';
import { graphBuildScorerSupplier } from '../quantized/graphBuildScorer.js';
import { CORRECTIONS_BYTES } from '../quantized/ScalarQuantizedVectorsFormat.js';
import type { RandomVectorScorerSupplier } from '../hnsw/RandomVectorScorer.js';
import type { OnHeapHnswGraph } from '../hnsw/OnHeapHnswGraph.js';

export interface GraphBuildSpec {
  readonly dir: string;
  readonly name: string;
  readonly id: Uint8Array;
  readonly suffix: string;
  readonly fieldNumber: number;
  readonly dims: number;
  readonly count: number;
  readonly m: number;
  readonly beamWidth: number;
  readonly minConnections: number;
  readonly seed: number;
}

/** What a merge's graph is built from besides its docs' codes: its inputs' graphs (SegmentMergeTask). */
export interface MergedGraphs {
  /** The largest input without deletions, taken over whole: its nodes are the ordinals 0 .. size - 1. */
  readonly initial: OnHeapHnswGraph | null;
  /**
   * Other inputs' graphs, each input's live docs the next ordinals after the one before
   * (HnswGraphBuilder.addGraph): each node's new ordinal, -1 for a deleted doc.
   */
  readonly joined: readonly { readonly graph: OnHeapHnswGraph; readonly ordMap: Int32Array }[];
  /** The beam of the level-0 searches of nodes outside a join set (default: the build's beam). */
  readonly lightBeamWidth?: number;
}

/**
 * Builds a segment's HNSW graph with the segment's own estimator in the kernels' memory (each
 * doc's query-bit code against its candidates' doc codes: 4-bit against 1-bit for the default
 * encoding, Lucene's asymmetric path) and writes `.vem/.vex`. With `merged`, the graph starts as
 * a merge's largest input's (HnswGraphBuilder.initializeFrom, its docs first in the new segment),
 * the docs of the other inputs with graphs go in through their join sets (addGraph), and only the
 * rest are inserted one by one.
 */
export async function buildSegmentGraph(
  spec: GraphBuildSpec,
  similarity: VectorSimilarityFunction,
  quantized: QuantizedField,
  onInserted: (n: number) => void,
  merged: MergedGraphs | null = null,
): Promise<void> {
  if (!quantized.queryRecords) throw new Error("graph build needs the docs' query records (quantizeField withQueryRecords)");
  const enc = quantized.settings.encoding;
  const k = await threadKernels();
  const codeBytes = enc.docCodeBytes(spec.dims);
  const recordsPtr = k.alloc(quantized.records.length);
  const queryRecordsPtr = k.alloc(quantized.queryRecords.length);
  try {
    k.u8().set(quantized.records, recordsPtr);
    k.u8().set(quantized.queryRecords, queryRecordsPtr);
    const records = { kernels: k, recordsPtr, count: spec.count, codeBytes, recordBytes: codeBytes + CORRECTIONS_BYTES };
    const supplier = graphBuildScorerSupplier(enc, records, queryRecordsPtr, quantized.queryRecords, spec.dims, similarity.ordinal, quantized.centroidDP);
    writeGraph(spec, similarity, buildGraph(spec, supplier, onInserted, merged));
  } finally {
    k.free(recordsPtr);
    k.free(queryRecordsPtr);
  }
}

function buildGraph(spec: GraphBuildSpec, supplier: RandomVectorScorerSupplier, onInserted: (n: number) => void, merged: MergedGraphs | null): OnHeapHnswGraph {
  let reported = 0;
  const builder = new HnswGraphBuilder(supplier, {
    M: spec.m,
    beamWidth: spec.beamWidth,
    seed: spec.seed,
    minLevel0Connections: spec.minConnections,
    progressEvery: 1000,
    onProgress: (done) => {
      onInserted(done - reported);
      reported = done;
    },
  });
  if (merged !== null) {
    if (merged.initial !== null) builder.initializeFrom(merged.initial);
    for (const { graph, ordMap } of merged.joined) builder.addGraph(graph, ordMap, merged.lightBeamWidth);
  }
  return builder.build();
}

function writeGraph(spec: GraphBuildSpec, similarity: VectorSimilarityFunction, graph: OnHeapHnswGraph): void {
  const writer = HnswVectorsWriter.create(
    join(spec.dir, segmentFileName(spec.name, spec.suffix, HNSW_META_EXTENSION)),
    join(spec.dir, segmentFileName(spec.name, spec.suffix, HNSW_INDEX_EXTENSION)),
    spec.id,
    spec.suffix,
  );
  writer.writeField({ fieldNumber: spec.fieldNumber, encoding: VectorEncoding.FLOAT32, similarity, dimension: spec.dims, maxConn: spec.m }, spec.count, graph);
  writer.close(); // writes the end marker and footers, fsyncs both files
}
