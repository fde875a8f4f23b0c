import type { FieldValues } from '../document/DocumentParser.js';

/** A document written since the last commit: what a search sees of it before it is in a committed segment. */
export interface PendingDoc {
  readonly id: string;
  readonly seqNo: number;
  readonly version: number;
  readonly vector: Float32Array;
  /** The `_source` as stored (the vector left out). */
  readonly source: Uint8Array;
  /** Indexed values by field path, as the mapping parsed them (what filters test). */
  readonly values: ReadonlyMap<string, FieldValues>;
}

/**
 * The writes since one commit, as a reader of that commit must add them to be current (the
 * near-real-time view that Lucene gets by flushing a segment, taken here without cutting one):
 * the latest version of every document written since, and the ids whose committed version no
 * longer holds (replaced or deleted). A reader at commit `generation` plus these answers as a
 * reader of a commit made now would.
 */
export interface PendingDocs {
  /** The commit these writes follow. */
  readonly generation: number;
  /** Live documents written since the commit, each id once (its latest version), in write order. */
  readonly docs: readonly PendingDoc[];
  /**
   * Ids a write since the commit replaced or deleted: their version in the commit (if it has one)
   * is hidden. A superset is harmless (an id the commit lacks hides nothing).
   */
  readonly hiddenIds: readonly string[];
  /** The mapping as of these writes (Elasticsearch's mapping JSON): it grows as documents bring new fields (dynamic mapping), before any commit holds it. */
  readonly mapping: Record<string, unknown> | null;
}

/** No writes since `generation`. */
export function noPendingDocs(generation: number, mapping: Record<string, unknown> | null = null): PendingDocs {
  return { generation, docs: [], hiddenIds: [], mapping };
}

/** One id's latest write since the commit: its document (null: deleted), and whether it replaced or deleted an older version. */
interface Change {
  readonly seqNo: number;
  readonly doc: PendingDoc | null;
  readonly hides: boolean;
}

/**
 * The writer's record of writes since its last commit, by id (IndexWriter keeps it): each write
 * replaces its id's entry, and a commit drops the entries its checkpoint holds. Entries are the
 * buffered documents themselves (no copy), so the record costs a map entry per written id.
 */
export class PendingChanges {
  private readonly byId = new Map<string, Change>();
  private hidden = 0;

  /** The document `doc` was written as `id` by op `seqNo`; `replaced`: it replaced a live version. */
  indexed(doc: PendingDoc, replaced: boolean): void {
    this.put(doc.id, { seqNo: doc.seqNo, doc, hides: replaced });
  }

  /** `id` was deleted by op `seqNo`; `found`: a live version was there. */
  deleted(id: string, seqNo: number, found: boolean): void {
    this.put(id, { seqNo, doc: null, hides: found });
  }

  private put(id: string, change: Change): void {
    const previous = this.byId.get(id);
    // Once an id's committed version is hidden it stays hidden, whatever later writes replace.
    const hides = change.hides || previous?.hides === true;
    if (previous?.hides === true) this.hidden--;
    if (hides) this.hidden++;
    // Re-inserted so that the map stays in write order.
    this.byId.delete(id);
    // A delete that hides nothing changes nothing a reader sees: no entry (a commit with nothing
    // to write would not drop it, and writers' views would count it forever).
    if (change.doc === null && !hides) return;
    this.byId.set(id, hides === change.hides ? change : { ...change, hides });
  }

  /** A commit holds every op up to `checkpoint`: their entries go. */
  committed(checkpoint: number): void {
    for (const [id, c] of this.byId) {
      if (c.seqNo > checkpoint) continue;
      this.byId.delete(id);
      if (c.hides) this.hidden--;
    }
  }

  /** Ids written (indexed or deleted) since the commit. */
  get size(): number {
    return this.byId.size;
  }

  /** Ids whose committed version writes since the commit hide. */
  get hiddenCount(): number {
    return this.hidden;
  }

  /** The writes as a reader of commit `generation` adds them. */
  snapshot(generation: number, mapping: Record<string, unknown>): PendingDocs {
    if (this.byId.size === 0) return noPendingDocs(generation, mapping);
    const docs: PendingDoc[] = [];
    const hiddenIds: string[] = [];
    for (const [id, c] of this.byId) {
      if (c.doc !== null) docs.push(c.doc);
      if (c.hides) hiddenIds.push(id);
    }
    return { generation, docs, hiddenIds, mapping };
  }

  clear(): void {
    this.byId.clear();
    this.hidden = 0;
  }
}
