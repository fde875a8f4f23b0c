import type { RandomVectorScorerSupplier } from '../hnsw/RandomVectorScorer.js';
import { BinaryQuantizedScorerSupplier, type ResidentRecords } from './BinaryQuantizedScorer.js';
import { EncodedQuantizedScorerSupplier } from './EncodedVectorScorer.js';
import type { ScalarEncodingInfo } from './ScalarEncodings.js';

/**
 * The doc-vs-doc scorer a segment's graph is built with (Lucene's asymmetric path: each doc's own
 * query-bit quantization against its candidates' doc codes), in wasm for every encoding: the
 * 1-bit kernel for 1-bit codes, the multi-bit one otherwise. The doc records and the query records
 * (queryCodeBytes + 16 bytes per doc, `queryRecords` on the heap, copied at `queryRecordsPtr`)
 * are in the kernels' memory. What `prescore build` and bench:recall's in-process graphs use.
 */
export function graphBuildScorerSupplier(
  encoding: ScalarEncodingInfo,
  records: ResidentRecords,
  queryRecordsPtr: number,
  queryRecords: Uint8Array,
  dims: number,
  similarity: number,
  centroidDP: number,
): RandomVectorScorerSupplier {
  return encoding.docBits === 1
    ? new BinaryQuantizedScorerSupplier(records, queryRecordsPtr, dims, similarity, centroidDP)
    : new EncodedQuantizedScorerSupplier(encoding, records, queryRecordsPtr, queryRecords, dims, similarity, centroidDP);
}
