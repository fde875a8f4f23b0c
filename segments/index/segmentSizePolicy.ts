import { SINGLE_BIT_QUERY_NIBBLE, type ScalarEncodingInfo } from '../quantized/ScalarEncodings.js';

/** Docs per segment for inputs up to TARGET_SEGMENTS x this many vectors (and of unknown size). */
export const DEFAULT_SEGMENT_DOCS = 131_072;

/**
 * Above DEFAULT_SEGMENT_DOCS x TARGET_SEGMENTS vectors, segments grow so their number stays at
 * this. The first phase searches every segment, and an HNSW search visits only slowly more nodes
 * as its graph grows, so the per-query cost follows the segment count, not N (see docs/building-indexes.md, "Segment
 * sizes"); eight segments keep both cores of a small machine busy while a build's graphs are made
 * one segment per worker.
 */
export const TARGET_SEGMENTS = 8;

/**
 * A graph build holds the segment's doc records and its query records in one worker's wasm32
 * memory (at most 4 GiB), and a served segment's records and graph must fit one 4 GiB arena;
 * this budget leaves the rest for scratch.
 */
const SEGMENT_MEMORY_BUDGET = 3.5 * 2 ** 30;

/**
 * The largest segment a worker can build, and an arena can hold, for vectors of `dims`
 * dimensions coded with `encoding` (default the 1-bit one): per doc, building needs a doc record
 * (docCodeBytes + 16) and a query record (queryCodeBytes + 16: 4 bit planes for 1-bit docs);
 * serving needs the record and its level-0 list (count + 2M ids at M = 16, with room for the
 * upper levels).
 */
export function maxSegmentDocs(dims: number, encoding: ScalarEncodingInfo = SINGLE_BIT_QUERY_NIBBLE): number {
  const record = encoding.docCodeBytes(dims) + 16;
  const building = record + encoding.queryCodeBytes(dims) + 16;
  const serving = record + 160;
  return Math.floor(SEGMENT_MEMORY_BUDGET / Math.max(building, serving));
}

/**
 * The default docs per segment for `count` vectors (undefined: not known before streaming, as
 * for JSONL): DEFAULT_SEGMENT_DOCS up to TARGET_SEGMENTS such segments, then count /
 * TARGET_SEGMENTS (equal segments), never above what one worker can build.
 */
export function defaultSegmentDocs(count: number | undefined, dims: number, encoding: ScalarEncodingInfo = SINGLE_BIT_QUERY_NIBBLE): number {
  if (count === undefined || count <= DEFAULT_SEGMENT_DOCS * TARGET_SEGMENTS) return DEFAULT_SEGMENT_DOCS;
  return Math.min(maxSegmentDocs(dims, encoding), Math.ceil(count / TARGET_SEGMENTS));
}
