import type { NeighborPrefetch } from '../../segments/hnsw/NeighborPrefetch.js';
import { PrefetchDistance } from './PrefetchDistance.js';
import type { PageAccess, PrefetchPolicy } from './PrefetchPolicy.js';
import { addCounters, type RescoreCounters } from './RescoreCounters.js';

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
  addCounters(into, from);
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
 * Per worker and segment: how many vectors in a row the prefetcher found resident (its reads
 * needed no I/O). Past RESIDENT_RUN the segment's searches stop paying for prefetch (see
 * GraphPrefetcher); any cold read found resets it.
 */
export class ResidencyStreak {
  run = 0;
}

/**
 * Consecutive resident reads after which a segment counts as resident: the adaptive policy's own
 * warm threshold (1024 probes, about one query's reads of a 250k segment).
 */
export const RESIDENT_RUN = 1024;
/**
 * Resident, every SAMPLE_HOPS-th hop (from the first) probes its first vector with mincore. A
 * segment search is ~100-200 hops of ~10 vectors, so that is ~5 probes of ~3 us on a ~2 ms
 * search (<1%); a segment that went cold is seen within 32 hops, and prefetch resumes there.
 */
const SAMPLE_HOPS = 32;

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
 *
 * Resident segments pay nothing measurable: once the segment's ResidencyStreak says so (and the
 * caller passes a `probe`), the search starts in sampling mode: every hop is scored at once
 * (bulkScore, as without prefetch) and only every SAMPLE_HOPS-th hop's first vector is probed.
 * A probe that misses switches the rest of the search (and the next ones) back to prefetching;
 * never backing off while cold is Lucene #16145's lesson for random access.
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
  /** Sampling mode (see the class comment); hops until the next probe. */
  private sampling: boolean;
  private untilProbe = 1;

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
    /** Adjacency prefetch of a node's neighbour list (`.vex` mapping); null: lists are read when expanded. */
    private readonly adjacency: ((ord: number) => boolean) | null,
    /** The segment's residency history (this worker's), and a residency probe of a vector: both or neither. */
    private readonly streak: ResidencyStreak | null = null,
    private readonly probe: ((ord: number) => boolean) | null = null,
  ) {
    this.distance = new PrefetchDistance(distance.initial, distance.cap);
    if (!(Number.isInteger(gen) && gen >= 1 && gen < 2 ** 29)) throw new RangeError(`stamp generation ${gen} outside [1, 2^29)`);
    this.resident = 2 * gen;
    this.cold = 2 * gen + 1;
    this.sampling = probe !== null && streak !== null && streak.run >= RESIDENT_RUN;
  }

  private started(ord: number): boolean {
    const s = this.stamps[ord];
    return s === this.resident || s === this.cold || s === -this.resident;
  }

  hop(ords: Int32Array, n: number): number {
    if (this.sampling) {
      if (--this.untilProbe > 0) return n;
      this.untilProbe = SAMPLE_HOPS;
      this.counters.syscalls++;
      if (this.probe!(ords[0])) {
        this.counters.pagesResident++;
        return n;
      }
      this.sampling = false;
      this.streak!.run = 0;
    }
    this.ords = ords;
    this.n = n;
    this.head = 0;
    this.advance(0);
    return 0;
  }

  next(i: number): number {
    const ord = this.ords[i];
    if (this.stamps[ord] === -this.resident) {
      this.stamps[ord] = this.cold;
      this.aheadUsed++;
    }
    this.advance(i);
    return i + 1;
  }

  spare(): number {
    if (this.sampling) return 0;
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
  candidate(ord: number): void {
    if (this.adjacency !== null && this.stamps[ord] === this.cold && this.adjacency(ord)) this.counters.adjacencyPrefetched++;
  }

  finish(): void {
    this.counters.readAhead += this.aheadIssued;
    this.counters.wasted += this.aheadIssued - this.aheadUsed;
    this.counters.maxDistance = Math.max(this.counters.maxDistance, this.distance.reached);
  }

  /** Starts the hop's reads up to the distance ahead of entry `tail`. */
  private advance(tail: number): void {
    const distance = this.distance;
    const streak = this.streak;
    let started = false;
    while (this.head < this.n && this.head - tail < distance.current) {
      const ord = this.ords[this.head++];
      if (this.started(ord)) continue; // read ahead by an earlier lookahead
      if (this.reads.start(ord)) {
        this.stamps[ord] = this.cold;
        distance.onIssued();
        if (streak !== null) streak.run = 0;
      } else {
        this.stamps[ord] = this.resident;
        distance.onResident();
        if (streak !== null) streak.run++;
      }
      started = true;
    }
    if (started) this.reads.flush();
  }
}

const EMPTY = new Int32Array(0);
