import { MappingError } from '../segments/document/Mapping.js';
import { parseArgs } from 'node:util';
import { readMappingFile } from './mappingFile.js';
import { Executor } from './executor/Executor.js';
import { formatDuration } from './progress/Progress.js';
import { DEFAULT_FIELD, DEFAULT_FLAT_THRESHOLD, DEFAULT_GRAPH_BEAM_WIDTH, DEFAULT_SEGMENT_DOCS } from '../segments/index/IndexBuilder.js';
import { TARGET_SEGMENTS } from '../segments/index/segmentSizePolicy.js';
import { buildIndex } from './api/buildIndex.js';
import { calibrateIndex, calibrationSummary, recallTargetFlag } from './calibrateCommand.js';
import { integerFlag, UsageError } from './cliFlags.js';
import { parseVectorFormat } from '../segments/input/index.js';
import { VectorSimilarityFunction } from '../segments/index/VectorSimilarityFunction.js';
import { DEFAULT_CENTROID_RULE, DEFAULT_ROTATION, type QuantizationOptions } from '../segments/quantized/ScalarQuantizedVectorsWriter.js';
import { DOC_BITS_CHOICES, type DocBits } from '../segments/quantized/ScalarEncodings.js';
import type { CentroidRule } from '../segments/quantized/ScalarQuantizedVectorsFormat.js';

export const BUILD_USAGE = `Usage: prescore build --input FILE --out DIR [--similarity S | --mapping FILE] [options]

Builds a prescore index: Lucene99 flat fp32 vectors (.vec/.vemf), 1-bit OSQ codes
(.veq/.vemq) and, for segments above the flat threshold, an HNSW graph (.vem/.vex).
Segments are quantized and graphed in parallel on the worker pool. The index is published
atomically when every segment is complete; on bad input nothing is published.
The build holds DIR/write.lock: a second build into DIR fails at once naming this one's
pid; files a killed build left are deleted first.

Input formats (by extension, or --format): .fvecs, .npy (float32, 2-D), .jsonl / .ndjson:
documents, {"id": "...", "vector": [...], ...any fields} per line, or an Elasticsearch _bulk
body (an {"index": {"_id": ...}} line before each document). fvecs/npy docs get their row
number as id; --fields adds their other fields from a JSON Lines file, row by row. Each
document's JSON is kept as its _source (Lucene stored fields, the vector left out: it is served
from the fp32 vectors), its fields as doc values for filters, by --mapping or mapped
dynamically as Elasticsearch does (strings as keyword); a document that does not fit fails the
build naming its row and field, and nothing is published.

Options:
  --input FILE          vectors to index (required)
  --out DIR             index directory, created if missing (required)
  --similarity S        cosine | dot_product | l2_norm (euclidean) | max_inner_product
                        (Elasticsearch's names; cosine rejects all-zero vectors); required
                        unless --mapping has a dense_vector field, whose similarity it is
  --mapping FILE        the index's mapping: Elasticsearch's \`mappings\` object (JSON), or a
                        whole index body holding one; default: every field mapped dynamically
  --fields FILE         with a vector file as --input: a JSON Lines file of the same rows'
                        other fields (row i: doc i's fields; an "id" there is the doc's id)
  --segment-docs N      docs per segment (default ${DEFAULT_SEGMENT_DOCS}; above ${TARGET_SEGMENTS} x ${DEFAULT_SEGMENT_DOCS}
                        vectors, N / ${TARGET_SEGMENTS}: ${TARGET_SEGMENTS} equal segments, so the per-query cost
                        does not grow with the segment count)
  --field NAME          vector field name (default ${DEFAULT_FIELD})
  --format F            fvecs | npy | jsonl (default: from the extension)
  --flat-threshold N    segments of at most N docs get no graph (default ${DEFAULT_FLAT_THRESHOLD})
  --m M                 HNSW max connections (default 16)
  --beam-width B        HNSW construction beam (default ${DEFAULT_GRAPH_BEAM_WIDTH}, twice Lucene's: graphs built
                        on 1-bit scores need it; docs/recall-and-tuning.md)
  --min-connections C   level-0 neighbour lists shorter than C after Lucene's diversity rule are
                        filled with the best candidates it rejected (default M / 2; 0: Lucene's
                        graph exactly; docs/recall-and-tuning.md)
  --bits B              doc bits per dimension: 1 | 2 | 4 | 7 | 8 (default 1); more bits, more
                        memory and recall (docs/recall-and-tuning.md says which setting reaches what)
  --rotation R          on | off | a 64-bit seed: rotate vectors before quantizing (default
                        ${DEFAULT_ROTATION ? 'on' : 'off'}); a rotated index is no longer Lucene's exact format
  --centroid C          lucene | mean: COSINE centroid rule (default ${DEFAULT_CENTROID_RULE}); mean is
                        prescore's extension, not Lucene's exact format
  --recall-target T     the index's default recall@10 (default 0.95): searches that name no
                        oversample, num_candidates or recall_target run the cheapest setting
                        the calibration measured to reach it
  --no-calibrate        skip the recall calibration at the end of the build (\`prescore
                        calibrate\` measures it later; an index opened without one measures it
                        in the background)
  --threads T           executor threads (default PRESCORE_THREADS or all cores)
  --quiet               no progress output
  -h, --help            this text
`;

export async function buildCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        input: { type: 'string' },
        out: { type: 'string' },
        similarity: { type: 'string' },
        mapping: { type: 'string' },
        fields: { type: 'string' },
        'segment-docs': { type: 'string' },
        field: { type: 'string' },
        format: { type: 'string' },
        'flat-threshold': { type: 'string' },
        m: { type: 'string' },
        'beam-width': { type: 'string' },
        'min-connections': { type: 'string' },
        bits: { type: 'string' },
        rotation: { type: 'string' },
        centroid: { type: 'string' },
        threads: { type: 'string' },
        'recall-target': { type: 'string' },
        'no-calibrate': { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`prescore build: ${(e as Error).message}\n\n${BUILD_USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(BUILD_USAGE);
    return 0;
  }
  try {
    if (!values.input) throw new UsageError('--input is required');
    if (!values.out) throw new UsageError('--out is required');
    const mapping = values.mapping === undefined ? undefined : readMappingFile(values.mapping);
    if (!values.similarity && !mapping?.vectorField())
      throw new UsageError('--similarity is required (cosine, dot_product, l2_norm or max_inner_product), or a --mapping with a dense_vector field');
    const similarity = values.similarity ? VectorSimilarityFunction.fromName(values.similarity) : undefined;
    const threads = integerFlag('threads', values.threads);
    const recallTarget = recallTargetFlag(values['recall-target']);
    if (recallTarget !== undefined && values['no-calibrate']) throw new UsageError('--recall-target needs the calibration that --no-calibrate skips');
    const executor = Executor.get({ threads });
    const report = await buildIndex({
      input: values.input,
      out: values.out,
      similarity,
      mapping,
      fields: values.fields,
      segmentDocs: integerFlag('segment-docs', values['segment-docs']),
      field: values.field,
      format: values.format ? parseVectorFormat(values.format) : undefined,
      flatThreshold: integerFlag('flat-threshold', values['flat-threshold'], 0),
      m: integerFlag('m', values.m),
      beamWidth: integerFlag('beam-width', values['beam-width']),
      minConnections: integerFlag('min-connections', values['min-connections'], 0),
      quantization: parseQuantization(values.bits, values.rotation, values.centroid),
      progress: !values.quiet,
      executor,
    });
    process.stdout.write(
      `built ${report.dir}: ${report.docs} docs x ${report.dims} dims in ${report.segments} segments ` +
        `(${report.graphs} with a graph), ${(report.bytes / 2 ** 20).toFixed(1)} MiB, ${formatDuration(report.elapsedMs)}; ` +
        `peak RSS ${(process.resourceUsage().maxRSS / 2 ** 20).toFixed(2)} GiB; commit ${report.commit}\n`,
    );
    if (!values['no-calibrate']) {
      const { calibration, ms } = await calibrateIndex(report.dir, { defaultTarget: recallTarget, quiet: values.quiet });
      process.stdout.write(calibrationSummary(calibration, ms));
    }
    return 0;
  } catch (e) {
    process.stderr.write(`prescore build: ${(e as Error).message}\n`);
    if (e instanceof UsageError) process.stderr.write(`\n${BUILD_USAGE}`);
    return e instanceof UsageError || e instanceof RangeError || e instanceof MappingError ? 2 : 1;
  } finally {
    await Executor.shutdown();
  }
}

function parseQuantization(bits: string | undefined, rotation: string | undefined, centroid: string | undefined): QuantizationOptions {
  const out: { bits?: DocBits; rotation?: boolean | bigint; centroid?: CentroidRule } = {};
  if (bits !== undefined) {
    const b = Number(bits);
    if (!DOC_BITS_CHOICES.includes(b as DocBits)) throw new UsageError(`--bits must be one of ${DOC_BITS_CHOICES.join(', ')}, got "${bits}"`);
    out.bits = b as DocBits;
  }
  if (rotation !== undefined) {
    if (rotation === 'on' || rotation === 'true') out.rotation = true;
    else if (rotation === 'off' || rotation === 'false') out.rotation = false;
    else if (/^-?\d+$/.test(rotation) && BigInt.asIntN(64, BigInt(rotation)) === BigInt(rotation)) out.rotation = BigInt(rotation);
    else throw new UsageError(`--rotation must be on, off or a 64-bit integer seed, got "${rotation}"`);
  }
  if (centroid !== undefined) {
    if (centroid !== 'lucene' && centroid !== 'mean') throw new UsageError(`--centroid must be lucene or mean, got "${centroid}"`);
    out.centroid = centroid;
  }
  return out;
}
