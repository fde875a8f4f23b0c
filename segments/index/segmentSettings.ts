import { DEFAULT_MAX_CONN } from '../hnsw/HnswGraphBuilder.js';
import type { Mapping } from '../document/Mapping.js';
import type { DirectoryReader } from './DirectoryReader.js';
import { DEFAULT_GRAPH_BEAM_WIDTH, defaultMinConnections } from './graphBuildPolicy.js';
import { FieldNumbers } from './SegmentDocumentsWriter.js';
import { decodeSegmentSettings, type SegmentBuildParameters, type SegmentSettings } from './SegmentWriter.js';

/** Segments up to this many docs are searched exhaustively (no graph) unless the commit says otherwise. */
export const DEFAULT_FLAT_THRESHOLD = 10_000;

/**
 * How the writer makes segments: as the commit records (SEGMENT_SETTINGS_KEY); for an index built
 * before that was kept, the build's defaults with the codes' bits and rotation of its first segment.
 */
export function segmentSettings(dir: string, reader: DirectoryReader, mapping: Mapping): SegmentSettings {
  const field = reader.field;
  const fieldNumbers = new FieldNumbers();
  for (const leaf of reader.leaves) for (const f of leaf.reader.documents?.fieldInfos.fields ?? []) fieldNumbers.assign(f.name, f.number);
  const recorded = decodeSegmentSettings(reader.commit.userData);
  const first = reader.leaves[0]?.reader.handle.quantized;
  const flatThreshold = Number(reader.commit.userData.get('flatThreshold') ?? DEFAULT_FLAT_THRESHOLD);
  const m = DEFAULT_MAX_CONN;
  const params: SegmentBuildParameters = recorded ?? {
    flatThreshold,
    m,
    beamWidth: DEFAULT_GRAPH_BEAM_WIDTH,
    minConnections: defaultMinConnections(m),
    quantization: first ? { bits: first.bits, rotation: first.rotationSeed ?? false } : {},
  };
  if (mapping.field(field.name) === undefined)
    mapping.put(field.name, { type: 'dense_vector', docValues: false, dims: field.dims, similarity: field.similarity.esName, indexOptions: null });
  return { dir, fieldName: field.name, similarity: field.similarity, dims: field.dims, fieldNumbers, ...params };
}
