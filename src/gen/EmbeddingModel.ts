import { isNormalized, type ModelSpec, STREAM_MODEL } from './DatasetSpec.js';
import { parseSeed, Rng } from './Rng.js';

/**
 * A generative model of embedding-like vectors, fixed by (seed, dim, similarity):
 *
 * - a latent space of L = min(D, 32..64) dims (64 from D = 1024, 44 at D = 384; see latentDims)
 *   mapped to D dims by a fixed random orthonormal basis: low intrinsic dimension;
 * - a power-law spectrum: latent coordinate j is scaled by (1+j)^-SPECTRUM_ALPHA, so a few
 *   directions carry much of the variance (anisotropy);
 * - 1024 clusters in two levels (TOPICS topics x SUBTOPICS sub-clusters), log-normal weights
 *   (very unequal sizes), per-cluster spread and per-cluster per-axis shape;
 * - low LOCAL intrinsic dimension: inside a cluster the variance follows its own steep spectrum
 *   (1+rank)^-LOCAL_ALPHA over a random per-cluster ordering of the latent axes (participation
 *   ratio ~6 of 64 at alpha 0.7), so similarity falls off with neighbour rank as in real data
 *   instead of all near neighbours being equally close (see NOISE_SHARE for the calibration);
 * - a non-zero global mean with a few outlier ("rogue") dimensions, as trained embeddings have;
 * - small isotropic noise in all D dims (NOISE_SHARE of the variance);
 * - cosine/dot_product: unit length; euclidean/max_inner_product: norms around 1 with a
 *   log-normal spread (NORM_SIGMA).
 *
 * Rows are drawn from an Rng; the model itself is drawn from the stream (seed, STREAM_MODEL).
 */
export const TOPICS = 32;
export const SUBTOPICS = 32;
/** Clusters of the model; a row's cluster id is in [0, CLUSTERS). */
export const CLUSTERS = TOPICS * SUBTOPICS;
const SPECTRUM_ALPHA = 0.3;
const TOPIC_SPREAD = 1.0;
const SUBTOPIC_SPREAD = 0.55;
const CLUSTER_SPREAD = 0.45;
/** Steepness of the within-cluster spectrum (see the class comment). */
const LOCAL_ALPHA = 0.7;
/**
 * Restores the within-cluster energy the steeper spectrum takes away (and a little more), so
 * clusters keep a realistic width: without it every cluster collapses to near-duplicates.
 */
const LOCAL_GAIN = 3.4;
const TOPIC_WEIGHT_SIGMA = 1.0;
const SUBTOPIC_WEIGHT_SIGMA = 1.0;
const ROGUE_DIMS = 4;
/** |mean|^2 relative to the expected signal energy: random pairs have cosine ~ MEAN_SHARE/(1+MEAN_SHARE). */
const MEAN_SHARE = 0.45;
/**
 * Noise energy relative to the expected signal energy. Isotropic noise spans all D dims, so at
 * nearest-neighbour distances it raises the local intrinsic dimension. Calibrated at the
 * benchmark scale (1M x 1024, cosine): with LOCAL_ALPHA 0.7 and 1% noise the MLE LID (k = 20) is
 * ~22, mid-range of the ~15-25 published for real datasets (SIFT, GloVe, text embeddings);
 * generator v1-v3 gave ~41, ~41 and ~29 there, harder than real embeddings.
 */
const NOISE_SHARE = 0.01;
const NORM_SIGMA = 0.15;

export function latentDims(dim: number): number {
  return Math.min(dim, Math.round(32 + 32 * Math.min(1, dim / 1024)));
}

export class EmbeddingModel {
  readonly dim: number;
  readonly latent: number;
  readonly normalize: boolean;
  /** The L x D orthonormal basis, stored transposed (D x L, float64). */
  private readonly basisT: Float64Array;
  /** D: the global mean. */
  private readonly mean: Float64Array;
  /** Cumulative cluster weights (CLUSTERS), last = 1. */
  private readonly cumulative: Float64Array;
  /** CLUSTERS x L: cluster centres, already scaled by the spectrum. */
  private readonly centres: Float64Array;
  /** CLUSTERS x L: per-axis standard deviation inside each cluster (spectrum included). */
  private readonly scales: Float64Array;
  private readonly noiseSigma: number;
  /** Global factor bringing typical norms to ~1 (unnormalized similarities). */
  private readonly normScale: number;
  // Scratch (per instance; a model is used by one thread).
  private readonly z: Float64Array;
  private readonly noise: Float64Array;
  private readonly factors: Float64Array;

  private static cache = new Map<string, EmbeddingModel>();

  /** The model for a spec, cached per thread (cheap to build, but chunk tasks are many). */
  static for(spec: ModelSpec): EmbeddingModel {
    const key = `${spec.seed}/${spec.dim}/${spec.similarity}`;
    let m = EmbeddingModel.cache.get(key);
    if (!m) {
      if (EmbeddingModel.cache.size > 8) EmbeddingModel.cache.clear();
      m = new EmbeddingModel(spec);
      EmbeddingModel.cache.set(key, m);
    }
    return m;
  }

  constructor(spec: ModelSpec) {
    const D = spec.dim;
    if (!Number.isInteger(D) || D <= 0) throw new RangeError(`dim must be a positive integer, got ${D}`);
    const L = latentDims(D);
    this.dim = D;
    this.latent = L;
    this.normalize = isNormalized(spec.similarity);
    const rng = Rng.from(parseSeed(spec.seed), STREAM_MODEL);

    // Orthonormal basis by Gram-Schmidt on Gaussian rows (twice, for numerical orthogonality).
    const basis = new Float64Array(L * D);
    rng.fillNormal(basis, 0, L * D);
    for (let j = 0; j < L; j++) {
      const row = j * D;
      for (let pass = 0; pass < 2; pass++) {
        for (let p = 0; p < j; p++) {
          let dot = 0;
          for (let i = 0; i < D; i++) dot += basis[row + i] * basis[p * D + i];
          for (let i = 0; i < D; i++) basis[row + i] -= dot * basis[p * D + i];
        }
      }
      let norm = 0;
      for (let i = 0; i < D; i++) norm += basis[row + i] * basis[row + i];
      norm = Math.sqrt(norm);
      for (let i = 0; i < D; i++) basis[row + i] /= norm;
    }
    const basisT = new Float64Array(L * D);
    for (let j = 0; j < L; j++) for (let i = 0; i < D; i++) basisT[i * L + j] = basis[j * D + i];
    this.basisT = basisT;

    const spectrum = new Float64Array(L);
    for (let j = 0; j < L; j++) spectrum[j] = (1 + j) ** -SPECTRUM_ALPHA;

    // Two-level clusters with log-normal weights at both levels.
    const centres = new Float64Array(CLUSTERS * L);
    const scales = new Float64Array(CLUSTERS * L);
    const weights = new Float64Array(CLUSTERS);
    const topic = new Float64Array(L);
    for (let t = 0; t < TOPICS; t++) {
      rng.fillNormal(topic, 0, L);
      const topicWeight = rng.logNormal(TOPIC_WEIGHT_SIGMA);
      for (let s = 0; s < SUBTOPICS; s++) {
        const c = t * SUBTOPICS + s;
        weights[c] = topicWeight * rng.logNormal(SUBTOPIC_WEIGHT_SIGMA);
        const spread = CLUSTER_SPREAD * rng.logNormal(0.35);
        for (let j = 0; j < L; j++) {
          const centre = TOPIC_SPREAD * topic[j] + SUBTOPIC_SPREAD * rng.normal();
          centres[c * L + j] = centre * spectrum[j];
          scales[c * L + j] = spread * rng.logNormal(0.4);
        }
      }
    }
    // Each cluster varies mostly along a few latent axes of its own.
    const order = new Int32Array(L);
    for (let c = 0; c < CLUSTERS; c++) {
      for (let j = 0; j < L; j++) order[j] = j;
      for (let j = L - 1; j > 0; j--) {
        const r = rng.nextInt(j + 1);
        const t = order[j];
        order[j] = order[r];
        order[r] = t;
      }
      for (let rank = 0; rank < L; rank++) scales[c * L + order[rank]] *= LOCAL_GAIN * (1 + rank) ** -LOCAL_ALPHA;
    }
    const cumulative = new Float64Array(CLUSTERS);
    let total = 0;
    for (let c = 0; c < CLUSTERS; c++) total += weights[c];
    let run = 0;
    for (let c = 0; c < CLUSTERS; c++) cumulative[c] = run += weights[c] / total;
    cumulative[CLUSTERS - 1] = 1;
    this.centres = centres;
    this.scales = scales;
    this.cumulative = cumulative;

    // Expected signal energy E|z|^2 (the basis is orthonormal, so it is the same in D dims).
    let signal = 0;
    for (let c = 0; c < CLUSTERS; c++) {
      const w = weights[c] / total;
      for (let j = 0; j < L; j++) signal += w * (centres[c * L + j] ** 2 + scales[c * L + j] ** 2);
    }

    // Global mean: a random direction with a few outlier dimensions.
    const mean = new Float64Array(D);
    rng.fillNormal(mean, 0, D);
    for (let r = 0; r < Math.min(ROGUE_DIMS, D); r++) mean[rng.nextInt(D)] *= 6;
    let meanNorm = 0;
    for (let i = 0; i < D; i++) meanNorm += mean[i] * mean[i];
    const meanScale = Math.sqrt((MEAN_SHARE * signal) / meanNorm);
    for (let i = 0; i < D; i++) mean[i] *= meanScale;
    this.mean = mean;

    this.noiseSigma = Math.sqrt((NOISE_SHARE * signal) / D);
    this.normScale = 1 / Math.sqrt(signal * (1 + MEAN_SHARE + NOISE_SHARE));
    this.z = new Float64Array(BLOCK * L);
    this.noise = new Float64Array(BLOCK * D);
    this.factors = new Float64Array(BLOCK);
  }

  /**
   * Draws `rows` vectors from `rng` into out[outOff..outOff + rows*dim). Random draws are made row
   * by row (cluster, L latent normals, D noise normals, norm factor), and each output element is
   * computed with the same operation order whether its row goes through the 4-row kernel or the
   * 1-row tail, so a row's bytes depend only on the draws. When `clusters` is given, row r's
   * cluster id goes to clusters[clustersOff + r] (recorded only: the draws are the same).
   */
  sample(rng: Rng, rows: number, out: Float32Array, outOff = 0, clusters?: Uint16Array, clustersOff = 0): void {
    const { dim: D, latent: L, basisT, mean, centres, scales, cumulative, z, noise, factors } = this;
    const noiseSigma = this.noiseSigma;
    for (let r0 = 0; r0 < rows; r0 += BLOCK) {
      const b = Math.min(BLOCK, rows - r0);
      for (let r = 0; r < b; r++) {
        const c = pickCluster(cumulative, rng.nextDouble());
        if (clusters) clusters[clustersOff + r0 + r] = c;
        const zo = r * L;
        rng.fillNormal(z, zo, L);
        for (let j = 0; j < L; j++) z[zo + j] = centres[c * L + j] + scales[c * L + j] * z[zo + j];
        rng.fillNormal(noise, r * D, D);
        factors[r] = this.normalize ? 0 : this.normScale * rng.logNormal(NORM_SIGMA);
      }
      // acc (in `noise`, overwritten in place): z . basis + mean + noise.
      let r = 0;
      for (; r + 4 <= b; r += 4) project4(basisT, z, r * L, mean, noise, r * D, noiseSigma, D, L);
      for (; r < b; r++) project1(basisT, z, r * L, mean, noise, r * D, noiseSigma, D, L);
      for (let r = 0; r < b; r++) {
        const no = r * D;
        let factor = factors[r];
        if (this.normalize) {
          let norm = 0;
          for (let i = 0; i < D; i++) norm += noise[no + i] * noise[no + i];
          factor = norm > 0 ? 1 / Math.sqrt(norm) : 0;
        }
        const o = outOff + (r0 + r) * D;
        for (let i = 0; i < D; i++) out[o + i] = noise[no + i] * factor;
      }
    }
  }

  /**
   * Cluster c's centre as the model would emit it for a row with no within-cluster deviation and
   * no noise: centre . basis + mean, then unit length (cosine, dot_product) or the median norm
   * factor (euclidean, max_inner_product). Float64, D values into out. The filters of `--filters`
   * rank clusters by the similarity of these centres to a query.
   */
  centreImage(c: number, out: Float64Array): void {
    const { dim: D, latent: L, basisT, mean, centres } = this;
    if (!Number.isInteger(c) || c < 0 || c >= CLUSTERS) throw new RangeError(`cluster must be an integer in [0, ${CLUSTERS}), got ${c}`);
    let norm = 0;
    for (let i = 0; i < D; i++) {
      let a = 0;
      const bo = i * L;
      for (let j = 0; j < L; j++) a += centres[c * L + j] * basisT[bo + j];
      out[i] = a + mean[i];
      norm += out[i] * out[i];
    }
    const factor = this.normalize ? (norm > 0 ? 1 / Math.sqrt(norm) : 0) : this.normScale;
    for (let i = 0; i < D; i++) out[i] *= factor;
  }
}

/**
 * noise[r*D + i] = (z_r . basisT_i) + mean[i] + noiseSigma * noise[r*D + i] for a block of 4
 * rows, two outputs at a time: 8 accumulators, each loaded value used 4 or 2 times. Every sum runs
 * over j in order, so the result is bit-identical to project1's.
 */
function project4(basisT: Float64Array, z: Float64Array, zo: number, mean: Float64Array, noise: Float64Array, no: number, noiseSigma: number, D: number, L: number): void {
  const z0 = zo,
    z1 = z0 + L,
    z2 = z1 + L,
    z3 = z2 + L;
  let i = 0;
  for (; i + 1 < D; i += 2) {
    let a0 = 0,
      a1 = 0,
      a2 = 0,
      a3 = 0,
      b0 = 0,
      b1 = 0,
      b2 = 0,
      b3 = 0;
    const p = i * L,
      q = p + L;
    for (let j = 0; j < L; j++) {
      const x = basisT[p + j],
        y = basisT[q + j];
      const u0 = z[z0 + j],
        u1 = z[z1 + j],
        u2 = z[z2 + j],
        u3 = z[z3 + j];
      a0 += u0 * x;
      a1 += u1 * x;
      a2 += u2 * x;
      a3 += u3 * x;
      b0 += u0 * y;
      b1 += u1 * y;
      b2 += u2 * y;
      b3 += u3 * y;
    }
    const m0 = mean[i],
      m1 = mean[i + 1];
    const o = no + i;
    noise[o] = a0 + m0 + noiseSigma * noise[o];
    noise[o + D] = a1 + m0 + noiseSigma * noise[o + D];
    noise[o + 2 * D] = a2 + m0 + noiseSigma * noise[o + 2 * D];
    noise[o + 3 * D] = a3 + m0 + noiseSigma * noise[o + 3 * D];
    noise[o + 1] = b0 + m1 + noiseSigma * noise[o + 1];
    noise[o + D + 1] = b1 + m1 + noiseSigma * noise[o + D + 1];
    noise[o + 2 * D + 1] = b2 + m1 + noiseSigma * noise[o + 2 * D + 1];
    noise[o + 3 * D + 1] = b3 + m1 + noiseSigma * noise[o + 3 * D + 1];
  }
  if (i < D) {
    for (let r = 0; r < 4; r++) projectOne(basisT, z, zo + r * L, mean, noise, no + r * D, noiseSigma, i, L);
  }
}

/** Output i of one row. */
function projectOne(basisT: Float64Array, z: Float64Array, zo: number, mean: Float64Array, noise: Float64Array, no: number, noiseSigma: number, i: number, L: number): void {
  let a = 0;
  const bo = i * L;
  for (let j = 0; j < L; j++) a += z[zo + j] * basisT[bo + j];
  noise[no + i] = a + mean[i] + noiseSigma * noise[no + i];
}

/** The same sums for one row (identical operation order per element as project4). */
function project1(basisT: Float64Array, z: Float64Array, zo: number, mean: Float64Array, noise: Float64Array, no: number, noiseSigma: number, D: number, L: number): void {
  for (let i = 0; i < D; i++) {
    let a = 0;
    const bo = i * L;
    for (let j = 0; j < L; j++) a += z[zo + j] * basisT[bo + j];
    noise[no + i] = a + mean[i] + noiseSigma * noise[no + i];
  }
}

/** Rows drawn per block before projecting them (in groups of 4, see project4). */
const BLOCK = 8;

function pickCluster(cumulative: Float64Array, u: number): number {
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
