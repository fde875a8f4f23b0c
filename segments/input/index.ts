export { InputError, type InputLocation } from './InputError.js';
export { VECTOR_FORMATS, type VectorFormat, type VectorBatch, type VectorSource } from './VectorSource.js';
export {
  type OpenVectorSourceOptions,
  openVectorSource,
  detectFormat,
  parseVectorFormat,
  batchIds,
  readAllVectors,
} from './openVectorSource.js';
export { readIvecs, MAX_XVECS_DIMS } from './XvecsReader.js';
export { FvecsWriter, IvecsWriter, writeFvecs, writeIvecs, type XvecsWriterOptions } from './XvecsWriter.js';
export { writeNpy, encodeNpy, parseNpyHeader, type NpyHeader, type WriteNpyOptions } from './Npy.js';
export { firstNonFinite, firstZeroRow, assertNoZeroRows } from './finite.js';
