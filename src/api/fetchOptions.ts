import { NO_FETCH, type FetchOptions } from '../../query/fetch/FetchPhase.js';
import type { GetOptions } from './types.js';

/** What the fetch phase reads for a hit or a get, from the facade's options (NO_FETCH: ids and scores only). */
export function fetchOptions(o: GetOptions): FetchOptions {
  const s = o.source;
  const fields = o.fields ?? [];
  const docvalueFields = (o.docvalueFields ?? []).map((f) => (typeof f === 'string' ? { field: f } : f));
  if ((s === undefined || s === false) && fields.length === 0 && docvalueFields.length === 0) return NO_FETCH;
  const source: FetchOptions['source'] =
    s === undefined || s === false
      ? false
      : s === true
        ? { includes: [], excludes: [] }
        : Array.isArray(s)
          ? { includes: s as readonly string[], excludes: [] }
          : { includes: (s as { includes?: readonly string[] }).includes ?? [], excludes: (s as { excludes?: readonly string[] }).excludes ?? [] };
  const excludeVectors = typeof s === 'object' && !Array.isArray(s) ? (s as { excludeVectors?: boolean }).excludeVectors !== false : true;
  return { source, excludeVectors, fields, docvalueFields };
}
