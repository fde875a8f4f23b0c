import type { TermsDict } from '../docvalues/TermsDict.js';
import { BloomFilter } from '../util/BloomFilter.js';
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
 * built at the first lookup (4 bytes per doc). In front of the dictionary, a Bloom filter of the
 * segment's ids (10 bits per doc, made in one pass over its terms at the first lookup) answers
 * "not here" for nearly every segment without the id: a `_bulk` of new ids looks each one up in
 * every segment, twice (its version, then the delete), and the dictionary's searches were a third
 * of the server's main-thread CPU while indexing (40k x 768 through `_bulk`, 20-30 segments,
 * profiled). A segment without documents (built before documents existed) maps every id once (its
 * `_N.ids`). The doc is returned whether or not it is deleted: the caller checks live docs.
 */
export class SegmentIdLookup {
  private ordToDoc: Int32Array | null = null;
  private byId: Map<string, number> | null = null;
  private filter: BloomFilter | null = null;
  /** One cursor for every lookup (they run one at a time, on the thread that owns the reader). */
  private terms: TermsDict | null = null;

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
      this.terms ??= producer.termsDict(ID_FIELD);
      if (this.filter === null) {
        const filter = new BloomFilter(this.reader.maxDoc);
        this.terms.forEachTerm((_, term) => filter.addBytes(term));
        this.filter = filter;
      }
      if (!this.filter.mayContain(id)) return -1;
      const ord = this.terms.lookupTerm(encoder.encode(id));
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
