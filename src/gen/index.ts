export { genCommand, GEN_USAGE } from './genCommand.js';
export {
  generateDataset,
  computeGroundTruth,
  generateVectors,
  datasetInfo,
  DATASET_FILES,
  type GenerateOptions,
  type GenerateResult,
  type GroundTruthResult,
} from './generateDataset.js';
export { groundTruth, recallAtK, rowsOf, TopK, type TopKResult } from './GroundTruth.js';
export {
  GENERATOR_VERSION,
  GEN_SIMILARITIES,
  type GenSimilarity,
  type DatasetSpec,
  type DatasetInfo,
  type ModelSpec,
} from './DatasetSpec.js';
export { EmbeddingModel, latentDims } from './EmbeddingModel.js';
export { Rng, parseSeed } from './Rng.js';
export { FILTER_FILES, filtersInfo, generateBaseWithFields, type FiltersResult } from './generateDataset.js';
export { readFilteredGroundTruth } from './FilteredGroundTruth.js';
export { FILTER_KINDS, SELECTIVITIES, CORRELATIONS, PER_QUERY, type FilterEntry, type FilterKind, type Correlation } from './FilterSet.js';
export { compileFilter, passes, type FilterDsl, type CompiledFilter } from './FilterDsl.js';
export { TAGS, type FieldColumns } from './DocFields.js';
