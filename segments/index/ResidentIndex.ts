import { createArenas, planArenas, type ResidentBytes } from './Arena.js';
import type { IndexReader, LeafReaderContext, SegmentReader } from './IndexReader.js';
import { checkFits } from './MemoryBudget.js';
import { newIndexId } from './releaseBoard.js';
import { ResidentCores, type HeldCore } from './ResidentCores.js';
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
 * An index's first-phase data held once for the whole process: its segments' codes and graphs
 * in arenas (Arena.ts), and a view of the reader whose segment handles point into them, which is
 * what the searcher hands to the workers. Segments another open reader already holds are shared
 * (ResidentCores), the others loaded. Before anything is allocated, the new segments' bytes are
 * checked against the memory the process may use, so an index that cannot fit fails at once,
 * saying how much it needs.
 */
export class ResidentIndex {
  private released = false;

  private constructor(
    readonly reader: IndexReader,
    private readonly held: readonly HeldCore[],
    private readonly cores: ResidentCores,
    /** Bytes of scratch one worker claims per arena, by arena. */
    private readonly scratch: ReadonlyMap<ArenaRef, number>,
    /** Segments this open loaded (the others were shared with readers already open). */
    readonly loadedSegments: number,
    /** Wall time of the load, ms. */
    readonly loadMs: number,
  ) {}

  static async load(reader: IndexReader, options: ResidentIndexOptions, cores: ResidentCores = ResidentCores.process): Promise<ResidentIndex> {
    const t0 = performance.now();
    const handles = reader.leaves.map((l) => l.reader.handle);
    const held: HeldCore[] = [];
    const heldAt: (HeldCore | null)[] = handles.map((h) => {
      const core = h.coreKey === null ? undefined : cores.acquire(h.coreKey);
      if (core) held.push(core);
      return core ?? null;
    });
    try {
      const fresh = handles.filter((_, i) => heldAt[i] === null);
      const plan = planArenas(fresh, { threads: options.threads, arenaBytes: options.arenaBytes });
      const { codes, graphs, scratchPerWorker } = plan.bytes;
      checkFits(
        codes + graphs + options.threads * scratchPerWorker,
        `index ${reader.dir} (${codes} bytes of codes, ${graphs} of graphs, ${scratchPerWorker} of scratch per worker x ${options.threads})`,
      );
      const placed = createArenas(newIndexId(), fresh, plan).handles;
      let loaded = 0;
      for (let i = 0, f = 0; i < handles.length; i++) {
        if (heldAt[i] !== null) continue;
        const h = placed[f++];
        if (!h.resident) continue;
        loaded++;
        const load = options.load(h);
        const core = h.coreKey === null ? { placement: h.resident, loaded: load.then(() => {}) } : cores.add(h.coreKey, h.resident, load);
        held.push(core);
        heldAt[i] = core;
      }
      await Promise.all(held.map((c) => c.loaded));
      const resident = handles.map((h, i) => (heldAt[i] ? { ...h, resident: heldAt[i]!.placement } : h));
      const scratch = new Map<ArenaRef, number>();
      for (const c of held) scratch.set(c.placement.arena, c.placement.arena.scratchBytes);
      return new ResidentIndex(withHandles(reader, resident), held, cores, scratch, loaded, performance.now() - t0);
    } catch (e) {
      cores.release(held.filter(isShared));
      throw e;
    }
  }

  /** What the index holds: its segments' codes and graphs (shared ones too) and the scratch of the arenas they lie in. */
  memory(): ResidentMemory {
    let codes = 0;
    let graphs = 0;
    for (const c of this.held) {
      codes += c.placement.bytes.codes;
      graphs += c.placement.bytes.graph;
    }
    let scratchPerWorker = 0;
    let claimed = 0;
    for (const [a, bytes] of this.scratch) {
      scratchPerWorker += bytes;
      claimed += Math.max(0, a.memory.buffer.byteLength - a.dataBytes);
    }
    return { codes, graphs, scratchPerWorker, arenas: this.scratch.size, scratchClaimed: claimed };
  }

  /**
   * Drops this index's hold on its segments (call once no search of it can run); returns the
   * release ids of arenas no open index holds any more, for every thread to drop its instances.
   */
  release(): number[] {
    if (this.released) return [];
    this.released = true;
    const freed = new Set(this.cores.release(this.held.filter(isShared)));
    for (const c of this.held) if (!isShared(c)) freed.add(c.placement.arena);
    return [...freed].map((a) => a.releaseId);
  }
}

/** A core the registry holds (as opposed to the private placement of a segment without a core key). */
function isShared(core: HeldCore): boolean {
  return 'refs' in core;
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
