import type { FieldValues } from '../../segments/document/DocumentParser.js';
import type { PendingDoc } from '../../segments/index/PendingDocs.js';
import type { DocValuesColumn, FilterLeaf, KeywordColumn, NumericColumn } from './FilterLeaf.js';

const encoder = new TextEncoder();
let leaves = 0;

/**
 * Documents written since the last commit as filters read them (FilterLeaf): doc d is `docs[d]`,
 * its columns built from the values the mapping parsed, the first time a filter asks for a field,
 * in the layout of a segment's doc values (DocValuesFilterLeaf): keyword terms sorted by their
 * UTF-8 bytes and numbered, numbers as float64 (with exact longs beyond ±2^53), each doc's values
 * sorted. So every filter evaluates these documents exactly as it will once they are in a segment.
 */
export class PendingDocsFilterLeaf implements FilterLeaf {
  readonly key = `pending-${++leaves}`;
  readonly liveDocs = null;
  private readonly columns = new Map<string, DocValuesColumn | null>();
  private byId: Map<string, number> | null = null;

  constructor(private readonly docs: readonly PendingDoc[]) {}

  get maxDoc(): number {
    return this.docs.length;
  }

  column(field: string): DocValuesColumn | null {
    let c = this.columns.get(field);
    if (c === undefined) this.columns.set(field, (c = this.build(field)));
    return c;
  }

  docForId(id: string): number {
    this.byId ??= new Map(this.docs.map((d, i) => [d.id, i]));
    return this.byId.get(id) ?? -1;
  }

  private build(field: string): DocValuesColumn | null {
    const perDoc: (FieldValues | undefined)[] = this.docs.map((d) => d.values.get(field));
    const first = perDoc.find((v) => v !== undefined && v.length > 0);
    if (first === undefined) return null;
    return typeof first[0] === 'string' ? keywordColumn(perDoc as (string[] | undefined)[]) : numericColumn(perDoc as ((number | bigint)[] | undefined)[]);
  }
}

function keywordColumn(perDoc: readonly (readonly string[] | undefined)[]): KeywordColumn {
  const distinct = [...new Set(perDoc.flatMap((v) => v ?? []))].map((term) => ({ term, bytes: encoder.encode(term) }));
  distinct.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  const ordOf = new Map(distinct.map((t, ord) => [t.term, ord]));
  const docOrds = perDoc.map((v) => [...new Set((v ?? []).map((t) => ordOf.get(t)!))].sort((a, b) => a - b));
  const single = docOrds.every((o) => o.length <= 1);
  const ceilingOrd = (term: string): number => {
    const bytes = encoder.encode(term);
    let lo = 0;
    let hi = distinct.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Buffer.compare(distinct[mid]!.bytes, bytes) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const common = { kind: 'keyword' as const, termCount: distinct.length, ord: (term: string) => ordOf.get(term) ?? -1, ceilingOrd, term: (ord: number) => distinct[ord]!.term };
  if (single) return { ...common, offsets: null, ords: Int32Array.from(docOrds, (o) => o[0] ?? -1) };
  const { offsets, flat } = flatten(docOrds);
  return { ...common, offsets, ords: Int32Array.from(flat) };
}

function numericColumn(perDoc: readonly (readonly (number | bigint)[] | undefined)[]): NumericColumn {
  const docValues = perDoc.map((v) => [...(v ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  // Integers beyond ±2^53 come as bigints: the column then keeps the exact longs beside the doubles.
  const exact = docValues.some((v) => v.some((x) => typeof x === 'bigint'));
  const single = docValues.every((v) => v.length <= 1);
  if (single) {
    const n = docValues.length;
    const present = new Uint32Array(Math.ceil(n / 32));
    let all = true;
    docValues.forEach((v, d) => {
      if (v.length === 1) present[d >>> 5]! |= 1 << (d & 31);
      else all = false;
    });
    return {
      kind: 'numeric',
      offsets: null,
      values: Float64Array.from(docValues, (v) => Number(v[0] ?? 0)),
      present: all ? null : present,
      exactLongs: exact ? BigInt64Array.from(docValues, (v) => BigInt(v[0] ?? 0)) : null,
    };
  }
  const { offsets, flat } = flatten(docValues);
  return { kind: 'numeric', offsets, values: Float64Array.from(flat, Number), present: null, exactLongs: exact ? BigInt64Array.from(flat, (x) => BigInt(x)) : null };
}

function flatten<T>(perDoc: readonly (readonly T[])[]): { offsets: Int32Array; flat: T[] } {
  const offsets = new Int32Array(perDoc.length + 1);
  const flat: T[] = [];
  perDoc.forEach((v, d) => {
    flat.push(...v);
    offsets[d + 1] = flat.length;
  });
  return { offsets, flat };
}
