/**
 * Filters (Lucene's query classes evaluated per segment into bitsets from doc-values columns)
 * and their cache: the library API of filtered search. See README.md beside this file.
 */
export type { FilterLeaf, DocValuesColumn, KeywordColumn, NumericColumn } from './FilterLeaf.js';
export { FixedBitSet, NO_MORE_DOCS } from './FixedBitSet.js';
export { BitSetIterator } from './BitSetIterator.js';
export { FilterQuery, UNCACHED, type ClauseBitSets } from './FilterQuery.js';
export { TermQuery } from './TermQuery.js';
export { TermInSetQuery } from './TermInSetQuery.js';
export { SortedNumericDocValuesRangeQuery } from './SortedNumericDocValuesRangeQuery.js';
export { TermRangeQuery } from './TermRangeQuery.js';
export { FieldExistsQuery } from './FieldExistsQuery.js';
export { BooleanQuery, type BooleanClauses, type Occur } from './BooleanQuery.js';
export { IdsQuery } from './IdsQuery.js';
export { MatchAllDocsQuery } from './MatchAllDocsQuery.js';
export { MatchNoDocsQuery } from './MatchNoDocsQuery.js';
export { calculateMinShouldMatch } from './MinimumShouldMatch.js';
export { FilterCache, cacheLeafClauses, usageTrackingPolicy, BOOLEAN_MIN_USES, DEFAULT_FILTER_CACHE_BYTES, type FilterCacheOptions, type FilterCacheStats } from './FilterCache.js';
export type { FilterValue, NumericValue } from './Values.js';
