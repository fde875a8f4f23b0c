import { readChecksummedInto } from '../codec/CodecUtil.js';
import { CorruptIndexException } from '../codec/CorruptIndexException.js';
import { HnswVectorsReader } from '../hnsw/HnswVectorsReader.js';
import type { SegmentHandle } from './SegmentHandle.js';

export interface SegmentLoadResult {
  /** Bytes read from disk (whole `.veq` and `.vex` files). */
  readonly bytesRead: number;
  readonly ms: number;
}

/**
 * Fills a segment's place in its arena (handle.resident) from its files, in O(files) reads:
 * the `.veq` streams front to back with its records landing straight in the arena; the `.vex`
 * is mapped and its neighbour lists decoded into the arena's layout in one pass (file-backed
 * pages, no anonymous copy of the file). The CRC32 footer of both files is checked as they
 * stream in, so a flipped byte fails here with a CorruptIndexException naming the file instead
 * of changing results. Runs on any thread (an executor task at open); the arena is shared, so
 * only this segment's bytes are written.
 */
export function loadResidentSegment(handle: SegmentHandle): SegmentLoadResult {
  const t0 = performance.now();
  const r = handle.resident;
  const q = handle.quantized;
  if (!r || !q) throw new Error(`segment ${handle.name} has no arena place to load into`);
  const buffer = r.arena.memory.buffer;
  if (r.records + q.count * q.recordBytes > buffer.byteLength) throw new RangeError(`segment ${handle.name}: arena ${r.arena.key} too small`);
  readChecksummedInto(q.file, q.offset - q.file.offset, new Uint8Array(buffer, r.records, q.count * q.recordBytes));
  let bytesRead = q.file.length;
  if (r.graph) {
    const g = handle.graph;
    if (!g) throw new Error(`segment ${handle.name}: a graph place but no graph files`);
    const layout = r.graph;
    const reader = HnswVectorsReader.open(g.vem, g.vex, g.segmentId, g.suffix);
    const entry = reader.field(g.fieldNumber);
    const counts = entry ? entry.nodesByLevel.slice(1).map((l) => l!.length) : [];
    if (!entry || entry.size !== layout.size || counts.length !== layout.upper.length || counts.some((c, i) => c !== layout.upper[i].count)) {
      throw new CorruptIndexException(`graph of field ${g.fieldNumber} changed since the index was opened`, g.vem.name);
    }
    layout.upper.forEach((l, i) => {
      new Int32Array(buffer, l.nodes, l.count).set(entry.nodesByLevel[i + 1]!);
    });
    reader.loadGraphInto(g.fieldNumber, {
      level: (level) =>
        level === 0
          ? { adj: new Int32Array(buffer, layout.level0, layout.size * layout.stride), stride: layout.stride }
          : { adj: new Int32Array(buffer, layout.upper[level - 1].adj, layout.upper[level - 1].count * layout.upper[level - 1].stride), stride: layout.upper[level - 1].stride },
    });
    bytesRead += g.vex.length + g.vem.length;
  }
  return { bytesRead, ms: performance.now() - t0 };
}

/** The executor task's shape of loadResidentSegment (task `index.loadResident`). */
export function loadResident(args: { readonly handle: SegmentHandle }): SegmentLoadResult {
  return loadResidentSegment(args.handle);
}
