import type { NeighborPrefetch } from '../../segments/hnsw/NeighborPrefetch.js';
import { PrefetchDistance } from './PrefetchDistance.js';
import type { PageAccess, PrefetchPolicy } from './PrefetchPolicy.js';
import type { RescoreCounters } from './RescoreCounters.js';

/** First-phase I/O counters: the rescoring ones plus the graph's read-ahead accounting. */
export interface GraphIoCounters extends RescoreCounters {
  /** Vectors read ahead for the next candidates (lookahead). */
  readAhead: number;
  /** Read-ahead vectors the search never scored. */
  wasted: number;
  /** Neighbour-list (adjacency) prefetches issued. */
  adjacencyPrefetched: number;
}

export function newGraphCounters(): GraphIoCounters {
  return { pagesPrefetched: 0, pagesResident: 0, syscalls: 0, readsBeforePrefetch: 0, scored: 0, maxDistance: 0, readAhead: 0, wasted: 0, adjacencyPrefetched: 0 };
}

export function addGraphCounters(into: GraphIoCounters, from: GraphIoCounters): void {
  into.pagesPrefetched += from.pagesPrefetched;
  into.pagesResident += from.pagesResident;
  into.syscalls += from.syscalls;
  into.readsBeforePrefetch += from.readsBeforePrefetch;
  into.scored += from.scored;
  into.maxDistance = Math.max(into.maxDistance, from.maxDistance);
  into.readAhead += from.readAhead;
  into.wasted += from.wasted;
  into.adjacencyPrefetched += from.adjacencyPrefetched;
}

/** How a vector's read is started: true when I/O was issued (the page was believed cold). */
export interface VectorReadStarter {
  start(ord: number): boolean;
  /** Hands queued reads to the kernel (io_uring submit); a no-op for madvise. */
  flush(): void;
}

/** madvise(WILLNEED) through a prefetch policy over a mapped file: the mmap read paths. */
export function policyReads(policy: PrefetchPolicy, file: PageAccess, byteSize: number, state: Int32Array, slot: number, counters: RescoreCounters): VectorReadStarter {
  return {
    start: (ord) => policy.prefetch(file, ord * byteSize, byteSize, state, slot, counters),
    flush: () => {},
  };
}

/**
 * The neighbour-prefetch hook of the disk-resident first phase (NeighborPrefetch), PostgreSQL
 * read-stream style over the stream of vectors the graph search scores:
 * - on each hop the unvisited neighbours are started up to `distance` ahead of scoring, and as
 *   each is scored the next one is started, so at most `distance` reads are in flight;
 * - the distance ramps (doubles on a read that needed I/O, shrinks by one on a resident one,
 *   PrefetchDistance) and is kept across hops, capped by this task's share of the I/O budget;
 * - lookahead: what the current hop leaves of the distance goes to the next candidates'
 *   neighbours; those never scored are counted as wasted;
 * - a neighbour that joins the candidate queue has its adjacency pages prefetched (policy-probed:
 *   a resident graph stops paying once the policy sees a warm streak).
 * A vector is started at most once per search (a per-ord stamp), so read-ahead is not repeated.
 */
export class GraphPrefetcher implements NeighborPrefetch {
  private ords: Int32Array = EMPTY;
  private n = 0;
  private head = 0;
  private readonly distance: PrefetchDistance;
  private aheadIssued = 0;
  private aheadUsed = 0;
  private readonly resident: number;
  private readonly cold: number;

  constructor(
    private readonly reads: VectorReadStarter,
    /**
     * Per-ord stamps of this search (generation g >= 1): 2g = started and found resident, 2g + 1 =
     * started with I/O, -2g = started as read-ahead.
     */
    private readonly stamps: Int32Array,
    gen: number,
    distance: { readonly initial: number; readonly cap: number },
    readonly counters: GraphIoCounters,
    /** Adjacency prefetch over the `.vex` mapping; null: neighbour lists are read when expanded. */
    private readonly adjacency: ((offset: number, length: number) => boolean) | null,
  ) {
    this.distance = new PrefetchDistance(distance.initial, distance.cap);
    if (!(Number.isInteger(gen) && gen >= 1 && gen < 2 ** 29)) throw new RangeError(`stamp generation ${gen} outside [1, 2^29)`);
    this.resident = 2 * gen;
    this.cold = 2 * gen + 1;
  }

  private started(ord: number): boolean {
    const s = this.stamps[ord];
    return s === this.resident || s === this.cold || s === -this.resident;
  }

  hop(ords: Int32Array, n: number): void {
    this.ords = ords;
    this.n = n;
    this.head = 0;
    this.advance(0);
  }

  next(i: number): void {
    const ord = this.ords[i];
    if (this.stamps[ord] === -this.resident) {
      this.stamps[ord] = this.cold;
      this.aheadUsed++;
    }
    this.advance(i);
  }

  spare(): number {
    // At the start of a hop `head` reads are in flight (none of the hop is scored yet).
    return Math.max(0, this.distance.current - this.head);
  }

  lookahead(ords: Int32Array, n: number): void {
    let budget = this.spare();
    for (let j = 0; j < n && budget > 0; j++) {
      const ord = ords[j];
      if (this.started(ord)) continue;
      this.stamps[ord] = -this.resident;
      this.aheadIssued++;
      budget--;
      this.reads.start(ord);
    }
    this.reads.flush();
  }

  /** Only a node whose vector needed I/O is likely to have cold adjacency pages: resident graphs skip this. */
  wantsAdjacency(ord: number): boolean {
    return this.adjacency !== null && this.stamps[ord] === this.cold;
  }

  candidate(offset: number, length: number): void {
    if (this.adjacency !== null && this.adjacency(offset, length)) this.counters.adjacencyPrefetched++;
  }

  finish(): void {
    this.counters.readAhead += this.aheadIssued;
    this.counters.wasted += this.aheadIssued - this.aheadUsed;
    this.counters.maxDistance = Math.max(this.counters.maxDistance, this.distance.reached);
  }

  /** Starts the hop's reads up to the distance ahead of entry `tail`. */
  private advance(tail: number): void {
    const distance = this.distance;
    let started = false;
    while (this.head < this.n && this.head - tail < distance.current) {
      const ord = this.ords[this.head++];
      if (this.started(ord)) continue; // read ahead by an earlier lookahead
      if (this.reads.start(ord)) {
        this.stamps[ord] = this.cold;
        distance.onIssued();
      } else {
        this.stamps[ord] = this.resident;
        distance.onResident();
      }
      started = true;
    }
    if (started) this.reads.flush();
  }
}

const EMPTY = new Int32Array(0);
