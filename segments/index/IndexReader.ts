import type { VectorFieldInfo } from './CommitPoint.js';
import type { SegmentHandle } from './SegmentHandle.js';
import type { SegmentDocuments } from './SegmentDocuments.js';
import type { Mapping } from '../document/Mapping.js';

/** One segment of an open index, as the main thread sees it. */
export interface SegmentReader {
  readonly name: string;
  readonly maxDoc: number;
  /** Docs that are live and have a vector for the field. */
  readonly numVectors: number;
  readonly handle: SegmentHandle;
  /** The user-facing id of a segment doc. */
  id(doc: number): string;
  /** Stored fields and doc values; null when the segment has none (an index built before documents). */
  readonly documents: SegmentDocuments | null;
  /** Live docs (bit d of word d >>> 5, deletions and soft deletes applied); null or absent: every doc is live. */
  readonly liveDocs?: Uint32Array | null;
  readonly bytes: { readonly vectors: number; readonly codes: number; readonly graph: number };
  /** Verifies the CRC32 of every file of the segment (reads every byte). */
  checkIntegrity(): void;
}

/** A segment and where its docs start in the global doc space (Lucene's LeafReaderContext). */
export interface LeafReaderContext {
  readonly ord: number;
  readonly docBase: number;
  readonly reader: SegmentReader;
}

/** A point-in-time view of an index: segments in docBase order (prescore's own, or a Lucene directory). */
export interface IndexReader {
  /** Process-unique id of this open reader (newIndexId). */
  readonly id: number;
  readonly dir: string;
  readonly field: VectorFieldInfo;
  readonly leaves: readonly LeafReaderContext[];
  /** Σ maxDoc over the segments (includes deleted docs). */
  readonly maxDoc: number;
  /** Verifies the CRC32 of every file of every segment (reads every byte). */
  checkIntegrity(): void;
  /** False once the directory holds a newer commit than this reader's (absent: the reader cannot tell). */
  isCurrent?(): boolean;
  /** The index's mapping (what its documents' fields are); absent: none is known (a Lucene index, an index built before documents). */
  readonly mapping?: Mapping | null;
  /** Releases the reader's mappings and file handles. */
  close(): void;
}

/** The leaf holding global doc `doc` (binary search over docBase). */
export function leafOf(leaves: readonly LeafReaderContext[], doc: number): LeafReaderContext {
  let lo = 0,
    hi = leaves.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (leaves[mid].docBase <= doc) lo = mid;
    else hi = mid - 1;
  }
  const leaf = leaves[lo];
  if (!leaf || doc < leaf.docBase || doc >= leaf.docBase + leaf.reader.maxDoc) throw new RangeError(`doc ${doc} out of range`);
  return leaf;
}
