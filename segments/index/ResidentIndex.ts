import { createArenas, planArenas, type ArenaPlan, type ResidentBytes } from './Arena.js';
import type { IndexReader, LeafReaderContext, SegmentReader } from './IndexReader.js';
import { checkFits } from './MemoryBudget.js';
import type { ArenaRef, SegmentHandle } from './SegmentHandle.js';
import type { SegmentLoadResult } from './SegmentLoader.js';

export interface ResidentIndexOptions {
  /** Executor threads that will search (each claims scratch in every arena). */
  readonly threads: number;
  /** Runs loadResidentSegment for one segment (the service: an executor task, so segments load in parallel). */
  readonly load: (handle: SegmentHandle) => Promise<SegmentLoadResult>;
  /** Bytes of segment data per arena at most (tests; default: as much as wasm32 allows). */
  readonly arenaBytes?: number;
}

/** The memory an open index holds now (ResidentBytes plus what the workers' scratch claimed so far). */
export interface ResidentMemory extends ResidentBytes {
  /** Scratch regions the workers have claimed so far, all arenas together (address space, touched lazily). */
  readonly scratchClaimed: number;
}

/**
 * An index's first-phase data loaded once for the whole process: the arenas (Arena.ts), filled
 * at open, and a view of the reader whose segment handles point into them, which is what the
 * searcher hands to the workers. Before anything is allocated, the plan's bytes are checked
 * against the memory the process may use, so an index that cannot fit fails at once, saying
 * how much it needs.
 */
export class ResidentIndex {
  private constructor(
    readonly reader: IndexReader,
    readonly arenas: readonly ArenaRef[],
    readonly plan: ArenaPlan,
    /** Wall time of the load, ms. */
    readonly loadMs: number,
  ) {}

  static async load(reader: IndexReader, options: ResidentIndexOptions): Promise<ResidentIndex> {
    const t0 = performance.now();
    const handles = reader.leaves.map((l) => l.reader.handle);
    const plan = planArenas(handles, { threads: options.threads, arenaBytes: options.arenaBytes });
    const { codes, graphs, scratchPerWorker } = plan.bytes;
    checkFits(
      codes + graphs + options.threads * scratchPerWorker,
      `index ${reader.dir} (${codes} bytes of codes, ${graphs} of graphs, ${scratchPerWorker} of scratch per worker x ${options.threads})`,
    );
    const { arenas, handles: resident } = createArenas(reader.id, handles, plan);
    await Promise.all(resident.map((h) => (h.resident ? options.load(h) : null)));
    return new ResidentIndex(withHandles(reader, resident), arenas, plan, performance.now() - t0);
  }

  memory(): ResidentMemory {
    let claimed = 0;
    for (const a of this.arenas) claimed += Math.max(0, a.memory.buffer.byteLength - a.dataBytes);
    return { ...this.plan.bytes, scratchClaimed: claimed };
  }
}

/** The reader with other handles for its segments (same order); everything else is the reader's. */
function withHandles(reader: IndexReader, handles: readonly SegmentHandle[]): IndexReader {
  const leaves: LeafReaderContext[] = reader.leaves.map((l, i) => ({ ...l, reader: new ResidentSegmentReader(l.reader, handles[i]) }));
  return {
    id: reader.id,
    dir: reader.dir,
    field: reader.field,
    leaves,
    maxDoc: reader.maxDoc,
    checkIntegrity: () => reader.checkIntegrity(),
    close: () => reader.close(),
  };
}

class ResidentSegmentReader implements SegmentReader {
  constructor(
    private readonly inner: SegmentReader,
    readonly handle: SegmentHandle,
  ) {}

  get name(): string {
    return this.inner.name;
  }

  get maxDoc(): number {
    return this.inner.maxDoc;
  }

  get numVectors(): number {
    return this.inner.numVectors;
  }

  get bytes(): SegmentReader['bytes'] {
    return this.inner.bytes;
  }

  id(doc: number): string {
    return this.inner.id(doc);
  }

  get documents(): SegmentReader['documents'] {
    return this.inner.documents;
  }

  get liveDocs(): SegmentReader['liveDocs'] {
    return this.inner.liveDocs;
  }

  checkIntegrity(): void {
    this.inner.checkIntegrity();
  }
}
