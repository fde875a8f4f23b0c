import { rmSync } from 'node:fs';
import { DocumentParser } from '../document/DocumentParser.js';
import { Mapping } from '../document/Mapping.js';
import type { SegmentCommitInfo } from './CommitPoint.js';
import { DirectoryReader } from './DirectoryReader.js';
import { segmentSettings } from './segmentSettings.js';
import { buildSegment } from './SegmentBuildTask.js';
import { FieldNumbers } from './SegmentDocumentsWriter.js';
import { SegmentWriter } from './SegmentWriter.js';
import { WriterSegment } from './WriterSegment.js';
import type { SegmentReader } from './IndexReader.js';
import { HnswVectorsReader } from '../hnsw/HnswVectorsReader.js';
import type { OnHeapHnswGraph } from '../hnsw/OnHeapHnswGraph.js';

export interface SegmentMergeArgs {
  readonly dir: string;
  /** The new segment's name (the writer's counter: never reused). */
  readonly name: string;
  /** The segments to merge, in order, each with its live docs when the merge started (null: all live). */
  readonly segments: readonly { readonly name: string; readonly live: Uint32Array | null }[];
  /** The writer's mapping, as JSON. */
  readonly mapping: string;
  /** The writer's field numbers (FieldNumbers.entries): the merged segment numbers its fields as every other segment does. */
  readonly fieldNumbers: readonly (readonly [string, number])[];
  readonly seed: number;
  /** How the merged graph is built from the inputs' graphs (default DEFAULT_GRAPH_MERGE). */
  readonly graphMerge?: GraphMerge;
}

/**
 * How a merge builds its graph. `largest`: from its largest input's graph without deletions, every
 * other doc inserted one by one (Lucene's IncrementalHnswGraphMerger, #12050). `join-sets`: that,
 * and the other inputs' graphs too, through their join sets (HnswGraphBuilder.addGraph, #14331),
 * with `lightBeamWidth` as the beam of the searches of the nodes outside them (default 2 x M, the
 * fewest candidates that can fill a level-0 list).
 */
export type GraphMerge = { readonly kind: 'largest' } | { readonly kind: 'join-sets'; readonly lightBeamWidth?: number };

export interface SegmentMergeResult {
  readonly info: SegmentCommitInfo;
  /** The merged segment's ids, in doc order. */
  readonly ids: readonly string[];
  /** Per merged doc, two ints: which of `args.segments` it came from, and its doc there. */
  readonly from: Int32Array;
  /** The input whose graph the merged graph started from (its docs come first), or null: built from scratch. */
  readonly graphFrom: string | null;
  /** How many of the merged docs went in through their input's graph's join set (HnswGraphBuilder.addGraph). */
  readonly docsJoined: number;
}

/** The graph merge of every merge unless the writer says otherwise (measured in bench:merge). */
export const DEFAULT_GRAPH_MERGE: GraphMerge = { kind: 'join-sets' };

/** Runs `mergeSegments` somewhere (the service: a task on an executor worker). */
export type SegmentMerger = (args: SegmentMergeArgs) => Promise<SegmentMergeResult>;

const decoder = new TextDecoder();

/**
 * A merge's whole work, on an executor worker (task `index.mergeSegments`): every live doc of the
 * given committed segments (vector, `_source` read again through the mapping, `_seq_no`,
 * `_version`) written as one new segment in doc order, its files fsynced as they close, then its
 * codes and graph built (SegmentBuildTask) in the same task. The writer's thread only publishes
 * the result. Why not there: reading, parsing and writing a merge's docs on the server's thread
 * (in ~2 ms slices) left searches p99 at 1.25 s while 200k x 768 docs went in through `_bulk`,
 * as the segment's doc values and stored fields were finished in one synchronous call.
 *
 * The segments are read from the directory's newest commit, which holds them until the merge is
 * published (only this merge removes them). On failure the new segment's files are deleted.
 */
export async function mergeSegments(args: SegmentMergeArgs): Promise<SegmentMergeResult> {
  const reader = DirectoryReader.open(args.dir);
  let writer: SegmentWriter | null = null;
  try {
    const mapping = Mapping.parse(JSON.parse(args.mapping));
    const parser = new DocumentParser(mapping);
    const settings = { ...segmentSettings(args.dir, reader, mapping), fieldNumbers: FieldNumbers.from(args.fieldNumbers) };
    const w = new SegmentWriter(settings, args.name);
    writer = w;
    const ids: string[] = [];
    const from: number[] = [];
    const leaves = args.segments.map(({ name }) => {
      const leaf = reader.leaves.find((l) => l.reader.name === name);
      if (leaf === undefined) throw new Error(`segment ${name} is not in the newest commit of ${args.dir}`);
      return leaf;
    });
    const graphs = inputGraphs(
      leaves.map((l) => l.reader),
      settings.m,
    );
    const start = graphToTakeOver(
      args.segments,
      leaves.map((l) => l.reader),
      graphs,
    );
    // The input taken over first, then the others with graphs (joined through them), then the rest.
    const graphMerge = args.graphMerge ?? DEFAULT_GRAPH_MERGE;
    const joining = graphMerge.kind === 'join-sets';
    const order = args.segments.map((_, s) => s).filter((s) => s !== start);
    order.sort((a, b) => Number(joining && graphs[b] !== null) - Number(joining && graphs[a] !== null));
    if (start !== null) order.unshift(start);
    const joined: { graph: OnHeapHnswGraph; ordMap: Int32Array }[] = [];
    for (let i = 0, next = 0; i < order.length; i++) {
      const s = order[i]!;
      const { live } = args.segments[s]!;
      const ordMap = new Int32Array(leaves[s]!.reader.maxDoc);
      for (let doc = 0; doc < ordMap.length; doc++) ordMap[doc] = live !== null && ((live[doc >>> 5]! >>> (doc & 31)) & 1) === 0 ? -1 : next++;
      if (joining && s !== start && graphs[s] !== null) joined.push({ graph: graphs[s]!, ordMap });
    }
    for (const s of order) {
      const { live } = args.segments[s]!;
      const leaf = leaves[s]!;
      const segment = WriterSegment.committed(reader.commit.segments[leaf.ord]!, leaf.reader);
      for (let doc = 0; doc < leaf.reader.maxDoc; doc++) {
        if (live !== null && ((live[doc >>> 5]! >>> (doc & 31)) & 1) === 0) continue;
        const stored = segment.read(doc);
        const id = segment.id(doc);
        const { values } = parser.parse(JSON.parse(decoder.decode(stored.source)));
        w.addDocument(id, stored.vector, { source: stored.source, values }, stored);
        ids.push(id);
        from.push(s, doc);
      }
    }
    const { info, build } = w.finish(mapping, args.seed, new Int32Array(new SharedArrayBuffer(8)));
    const lightBeamWidth = graphMerge.kind === 'join-sets' ? graphMerge.lightBeamWidth : undefined;
    await buildSegment(build, { initial: start === null ? null : graphs[start]!, joined, ...(lightBeamWidth === undefined ? {} : { lightBeamWidth }) });
    const docsJoined = joined.reduce((sum, j) => sum + j.ordMap.reduce((live, o) => live + (o === -1 ? 0 : 1), 0), 0);
    return { info, ids, from: Int32Array.from(from), graphFrom: start === null ? null : args.segments[start]!.name, docsJoined };
  } catch (e) {
    writer?.abort();
    for (const f of writer?.files ?? []) rmSync(f, { force: true });
    throw e;
  } finally {
    reader.close();
  }
}

/**
 * Each input's graph when the merged graph can build on it: read and verified (CRC) from its
 * `.vem/.vex`, built with the merged segment's M, one node per doc. Else null (no graph: a flat
 * segment).
 */
function inputGraphs(leaves: readonly SegmentReader[], m: number): (OnHeapHnswGraph | null)[] {
  return leaves.map((leaf) => {
    const g = leaf.handle.graph;
    if (g === null) return null;
    const graph = HnswVectorsReader.openMeta(g.vem, g.vex, g.segmentId, g.suffix).verifiedGraph(g.fieldNumber);
    return graph !== null && graph.maxConn === m && graph.size() === leaf.maxDoc ? graph : null;
  });
}

/**
 * The input whose graph a merge starts from (Lucene's IncrementalHnswGraphMerger, #12050): the
 * one with the most docs among those with a graph and no deleted docs (its docs keep their
 * ordinals as the merged segment's first ones, so its lists hold as they are; a deleted doc would
 * leave holes in them). Else null.
 */
function graphToTakeOver(inputs: SegmentMergeArgs['segments'], leaves: readonly SegmentReader[], graphs: readonly (OnHeapHnswGraph | null)[]): number | null {
  let best: number | null = null;
  for (let s = 0; s < inputs.length; s++) {
    if (inputs[s]!.live !== null || graphs[s] === null) continue;
    if (best === null || leaves[s]!.maxDoc > leaves[best]!.maxDoc) best = s;
  }
  return best;
}
