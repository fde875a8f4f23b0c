import type { SegmentDocuments } from './SegmentDocuments.js';
import type { SegmentReader } from './IndexReader.js';
import { ID_FIELD } from './SegmentDocumentsWriter.js';

const encoder = new TextEncoder();

/** One lookup per open segment (its reader is the key: gone when it is). */
const lookups = new WeakMap<SegmentReader, SegmentIdLookup>();

/**
 * Finds a segment's doc by its user-facing id (what an update, a delete or an `ids` filter names).
 * A segment with documents looks the id up in its `_id` SORTED doc values: the terms dictionary
 * gives the ord (a binary search over its blocks, no per-doc memory), then an ord -> doc table
 * built at the first lookup (4 bytes per doc). A segment without documents (built before
 * documents existed) maps every id once (its `_N.ids`). The doc is returned whether or not it
 * is deleted: the caller checks live docs.
 */
export class SegmentIdLookup {
  private ordToDoc: Int32Array | null = null;
  private byId: Map<string, number> | null = null;

  private constructor(private readonly reader: SegmentReader) {}

  static of(reader: SegmentReader): SegmentIdLookup {
    let l = lookups.get(reader);
    if (l === undefined) lookups.set(reader, (l = new SegmentIdLookup(reader)));
    return l;
  }

  /** Whether `documents` can find ids by their `_id` doc values (a prescore segment with documents). */
  static hasIdValues(documents: SegmentDocuments | null): boolean {
    return documents !== null && documents.docValues.producer(ID_FIELD) !== null;
  }

  /** The segment doc whose id is `id`, or -1. */
  docForId(id: string): number {
    const documents = this.reader.documents;
    if (SegmentIdLookup.hasIdValues(documents)) {
      const producer = documents!.docValues.producer(ID_FIELD)!;
      const ord = producer.termsDict(ID_FIELD).lookupTerm(encoder.encode(id));
      if (ord < 0) return -1;
      if (this.ordToDoc === null) {
        const ords = producer.sortedColumn(ID_FIELD).ords;
        const inverse = new Int32Array(ords.length).fill(-1);
        for (let d = 0; d < ords.length; d++) if (ords[d]! >= 0) inverse[ords[d]!] = d;
        this.ordToDoc = inverse;
      }
      return this.ordToDoc[ord] ?? -1;
    }
    if (this.byId === null) {
      const map = new Map<string, number>();
      for (let d = 0; d < this.reader.maxDoc; d++) map.set(this.reader.id(d), d);
      this.byId = map;
    }
    return this.byId.get(id) ?? -1;
  }
}
