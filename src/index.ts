/**
 * prescore as a library: Lucene's names for the search pieces, plus a facade.
 *
 *   const index = await openIndex('data/demo/index');
 *   const { hits, stats } = await index.search(vector, { k: 10, oversample: 3 });
 *   const filtered = await index.search(vector, { k: 10, filter: new TermQuery('category', 'books'), source: true });
 *   await index.close();
 */
export { openIndex, openReader, DEFAULT_NUM_CANDIDATES, defaultBeam, type OpenIndexOptions } from './api/openIndex.js';
export { openLuceneIndex, type OpenLuceneIndexOptions } from './api/openLuceneIndex.js';
export * from './api/types.js';
export { IndexSearcher, type IndexSearcherOptions } from './api/IndexSearcher.js';
export type { SearchSettings, SearchOutcome } from '../query/IndexSearcher.js';
export { KnnFloatVectorQuery, type KnnOptions } from '../query/KnnFloatVectorQuery.js';
export { RescoreTopNQuery } from '../query/RescoreTopNQuery.js';
export { DocAndScoreQuery } from '../query/DocAndScoreQuery.js';
export { Query, type SearchContext } from '../query/Query.js';
export { TopDocs } from '../query/TopDocs.js';
export type { ScoreDoc, TotalHits, TotalHitsRelation } from '../query/ScoreDoc.js';
export { VectorSimilarityFunction, type SimilarityName } from '../segments/index/VectorSimilarityFunction.js';
export { DoubleValuesSource, FullPrecisionFloatVectorSimilarityValuesSource } from '../query/DoubleValuesSource.js';
export { PREFETCH_POLICIES, type PrefetchPolicyName } from '../query/prefetch/PrefetchPolicy.js';
export {
  FilterQuery,
  TermQuery,
  TermInSetQuery,
  TermRangeQuery,
  SortedNumericDocValuesRangeQuery,
  FieldExistsQuery,
  IdsQuery,
  BooleanQuery,
  MatchAllDocsQuery,
  MatchNoDocsQuery,
  calculateMinShouldMatch,
  type BooleanClauses,
  type FilterValue,
  type NumericValue,
} from '../query/filter/index.js';
export { DirectoryReader } from '../segments/index/DirectoryReader.js';
export type { IndexReader, LeafReaderContext, SegmentReader } from '../segments/index/IndexReader.js';
export { LuceneIndexReader, type LuceneIndexReaderOptions } from '../segments/lucene/LuceneIndexReader.js';
export { buildIndex, type BuildOptions, type BuildReport } from './api/buildIndex.js';
export { openIndexWriter, type OpenIndexWriterOptions } from './api/openIndexWriter.js';
export { PendingDocsIndex } from './api/PendingDocsIndex.js';
export type { PendingDocs, PendingDoc } from '../segments/index/PendingDocs.js';
export type { FieldValues } from '../segments/document/DocumentParser.js';
export {
  IndexWriter,
  VersionConflictError,
  PRIMARY_TERM,
  type CurrentDocument,
  type Durability,
  type IndexWriterOptions,
  type IndexWriterServices,
  type NewIndexOptions,
  type WriteOptions,
  type WriteResult,
} from '../segments/index/IndexWriter.js';
export type { SegmentBuildParameters } from '../segments/index/SegmentWriter.js';
export { DEFAULT_GRAPH_MERGE, type GraphMerge } from '../segments/index/SegmentMergeTask.js';
export { MAX_RECALL_TARGET, MIN_RECALL_TARGET, type CalibrationSource, type RecallCalibration, type RecallPoint } from '../segments/index/RecallCalibration.js';
export { CALIBRATE_AT_OPEN_DOCS, CALIBRATE_WHEN, type CalibrateWhen } from './calibration/IndexRecallCalibration.js';
export { RecallTargetError } from './calibration/RecallTargetError.js';
export type { ProgressStream } from './progress/Progress.js';
export { TieredMergePolicy, type TieredMergePolicyOptions, type MergeCandidate } from '../segments/index/TieredMergePolicy.js';
export type { DocVersion, StoredDoc } from '../segments/index/WriterSegment.js';
export type { DenseVectorSimilarity } from '../segments/document/FieldMapping.js';
export { DocumentError } from '../segments/document/DocumentParser.js';
export { Mapping, MappingError } from '../segments/document/Mapping.js';
export type { QuantizationOptions } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';
export { CorruptIndexException } from '../segments/codec/CorruptIndexException.js';
export { InputError } from '../segments/input/index.js';
export { Executor } from './executor/Executor.js';
export {
  startServer,
  createApp,
  IndexWrites,
  ReopeningIndex,
  type PrescoreApp,
  type RunningServer,
  type ServerOptions,
  type StartServerDeps,
  type Reopenable,
  type RefreshOutcome,
  DataDirectory,
  SingleIndexCatalog,
  servedIndex,
  defaultIndexSettings,
  type ServedIndexDeps,
  type IndexCatalog,
  type ServedIndex,
  type IndexSettings,
} from './http/index.js';
