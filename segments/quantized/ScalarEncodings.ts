import { discretize } from '../quantization/BitPacking.js';

/** Doc bits per dimension prescore builds (`prescore build --bits`). */
export type DocBits = 1 | 2 | 4 | 7 | 8;
export const DOC_BITS_CHOICES: readonly DocBits[] = [1, 2, 4, 7, 8];

/**
 * One of Lucene104ScalarQuantizedVectorsFormat's ScalarEncodings: how many bits a doc and a
 * query component get, and the sizes of their codes. The byte layouts (documented in
 * ScalarQuantizedVectorsFormat.ts) are implemented in ScalarCodes.ts.
 */
export interface ScalarEncodingInfo {
  readonly name: 'UNSIGNED_BYTE' | 'PACKED_NIBBLE' | 'SEVEN_BIT' | 'SINGLE_BIT_QUERY_NIBBLE' | 'DIBIT_QUERY_NIBBLE';
  /** The wire number written in `.vemq`. */
  readonly wire: number;
  readonly docBits: DocBits;
  readonly queryBits: 4 | 7 | 8;
  /** D': the dimension the codes are laid out for (padding components are 0). */
  discreteDims(dims: number): number;
  /** Bytes of one packed doc code. */
  docCodeBytes(dims: number): number;
  /**
   * Bytes of one packed query code as the scorers read it: 4 bit planes of D'/8 bytes for the
   * 1- and 2-bit encodings (Lucene's transposed nibble query), one byte per component otherwise.
   */
  queryCodeBytes(dims: number): number;
}

const bitPlanes = (dims: number) => discretize(dims, 8) >> 3;

export const SINGLE_BIT_QUERY_NIBBLE: ScalarEncodingInfo = {
  name: 'SINGLE_BIT_QUERY_NIBBLE',
  wire: 3,
  docBits: 1,
  queryBits: 4,
  discreteDims: (d) => discretize(d, 8),
  docCodeBytes: (d) => bitPlanes(d),
  queryCodeBytes: (d) => 4 * bitPlanes(d),
};

export const DIBIT_QUERY_NIBBLE: ScalarEncodingInfo = {
  name: 'DIBIT_QUERY_NIBBLE',
  wire: 4,
  docBits: 2,
  queryBits: 4,
  discreteDims: (d) => discretize(d, 8),
  docCodeBytes: (d) => 2 * bitPlanes(d),
  queryCodeBytes: (d) => 4 * bitPlanes(d),
};

export const PACKED_NIBBLE: ScalarEncodingInfo = {
  name: 'PACKED_NIBBLE',
  wire: 1,
  docBits: 4,
  queryBits: 4,
  discreteDims: (d) => discretize(d, 2),
  docCodeBytes: (d) => discretize(d, 2) >> 1,
  queryCodeBytes: (d) => discretize(d, 2),
};

export const SEVEN_BIT: ScalarEncodingInfo = {
  name: 'SEVEN_BIT',
  wire: 2,
  docBits: 7,
  queryBits: 7,
  discreteDims: (d) => d,
  docCodeBytes: (d) => d,
  queryCodeBytes: (d) => d,
};

export const UNSIGNED_BYTE: ScalarEncodingInfo = {
  name: 'UNSIGNED_BYTE',
  wire: 0,
  docBits: 8,
  queryBits: 8,
  discreteDims: (d) => d,
  docCodeBytes: (d) => d,
  queryCodeBytes: (d) => d,
};

const BY_BITS: Record<DocBits, ScalarEncodingInfo> = { 1: SINGLE_BIT_QUERY_NIBBLE, 2: DIBIT_QUERY_NIBBLE, 4: PACKED_NIBBLE, 7: SEVEN_BIT, 8: UNSIGNED_BYTE };
const BY_WIRE = new Map(Object.values(BY_BITS).map((e) => [e.wire, e]));

export function encodingForBits(bits: number): ScalarEncodingInfo {
  const e = BY_BITS[bits as DocBits];
  if (!e) throw new RangeError(`bits must be one of ${DOC_BITS_CHOICES.join(', ')}: ${bits}`);
  return e;
}

/** The encoding with this wire number, or undefined when prescore does not know it. */
export function encodingForWire(wire: number): ScalarEncodingInfo | undefined {
  return BY_WIRE.get(wire);
}
