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
