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
}

export interface SegmentMergeResult {
  readonly info: SegmentCommitInfo;
  /** The merged segment's ids, in doc order. */
  readonly ids: readonly string[];
  /** Per merged doc, two ints: which of `args.segments` it came from, and its doc there. */
  readonly from: Int32Array;
  /** The input whose graph the merged graph started from (its docs come first), or null: built from scratch. */
  readonly graphFrom: string | null;
}

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
    const start = graphToTakeOver(
      args.segments,
      leaves.map((l) => l.reader),
      settings.m,
    );
    const order = args.segments.map((_, s) => s);
    if (start !== null) order.unshift(...order.splice(start.input, 1));
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
    await buildSegment(build, start?.graph ?? null);
    return { info, ids, from: Int32Array.from(from), graphFrom: start === null ? null : args.segments[start.input]!.name };
  } catch (e) {
    writer?.abort();
    for (const f of writer?.files ?? []) rmSync(f, { force: true });
    throw e;
  } finally {
    reader.close();
  }
}

/**
 * The input whose graph a merge starts from (Lucene's IncrementalHnswGraphMerger, #12050): the
 * one with the most docs among those with a graph and no deleted docs (its docs keep their
 * ordinals as the merged segment's first ones, so its lists hold as they are; a deleted doc would
 * leave holes in them), when its graph was built with the merged segment's M. Else null.
 */
function graphToTakeOver(inputs: SegmentMergeArgs['segments'], leaves: readonly SegmentReader[], m: number): { readonly input: number; readonly graph: OnHeapHnswGraph } | null {
  let best = -1;
  for (let s = 0; s < inputs.length; s++) {
    const g = leaves[s]!.handle.graph;
    if (inputs[s]!.live !== null || g === null) continue;
    if (best === -1 || leaves[s]!.maxDoc > leaves[best]!.maxDoc) best = s;
  }
  if (best === -1) return null;
  const g = leaves[best]!.handle.graph!;
  const graph = HnswVectorsReader.openMeta(g.vem, g.vex, g.segmentId, g.suffix).verifiedGraph(g.fieldNumber);
  if (graph === null || graph.maxConn !== m || graph.size() !== leaves[best]!.maxDoc) return null;
  return { input: best, graph };
}
