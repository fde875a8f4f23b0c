import { writeFile } from 'node:fs/promises';

/** The NumPy `.npy` magic string: \x93NUMPY. */
export const NPY_MAGIC = Uint8Array.of(0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59);

export interface NpyHeader {
  readonly major: number;
  readonly minor: number;
  /** The dtype as written: a string like '<f4', or a description of a structured dtype. */
  readonly descr: string;
  readonly structured: boolean;
  readonly fortranOrder: boolean;
  readonly shape: readonly number[];
  /** Byte offset of the array data. */
  readonly dataOffset: number;
}

/**
 * How many bytes of the file the header needs: 10 for v1 (2-byte length), 12 for v2/v3 (4-byte
 * length). Returns the total header length once the prefix is available, or throws a plain Error
 * (the caller wraps it with the file name).
 */
export function npyPrefixLength(prefix: Uint8Array): { major: number; minor: number; dataOffset: number; headerStart: number } {
  if (prefix.length < 10 || !NPY_MAGIC.every((b, i) => prefix[i] === b)) throw new Error('not a .npy file (bad magic)');
  const major = prefix[6];
  const minor = prefix[7];
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  if (major === 1) return { major, minor, headerStart: 10, dataOffset: 10 + view.getUint16(8, true) };
  if (major === 2 || major === 3) {
    if (prefix.length < 12) throw new Error('truncated .npy header');
    return { major, minor, headerStart: 12, dataOffset: 12 + view.getUint32(8, true) };
  }
  throw new Error(`unsupported .npy format version ${major}.${minor} (expected 1.0, 2.0 or 3.0)`);
}

/** Parses the header dictionary (a Python literal) of a `.npy` file. Throws plain Errors. */
export function parseNpyHeader(bytes: Uint8Array): NpyHeader {
  const { major, minor, headerStart, dataOffset } = npyPrefixLength(bytes);
  if (bytes.length < dataOffset) throw new Error('truncated .npy header');
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(headerStart, dataOffset));
  const dict = new PyLiteralParser(text).parseTop();
  if (typeof dict !== 'object' || dict === null || Array.isArray(dict) || dict instanceof PyTuple) {
    throw new Error('.npy header is not a dictionary');
  }
  const d = dict as Record<string, PyValue>;
  for (const key of ['descr', 'fortran_order', 'shape']) {
    if (!(key in d)) throw new Error(`.npy header lacks '${key}'`);
  }
  const descrValue = d.descr;
  const structured = typeof descrValue !== 'string';
  const descr = structured ? formatPy(descrValue) : (descrValue as string);
  if (typeof d.fortran_order !== 'boolean') throw new Error(`.npy header 'fortran_order' is not a boolean`);
  const shapeValue = d.shape;
  if (!(shapeValue instanceof PyTuple) || !shapeValue.items.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)) {
    throw new Error(`.npy header 'shape' is not a tuple of non-negative integers: ${formatPy(shapeValue)}`);
  }
  return { major, minor, descr, structured, fortranOrder: d.fortran_order, shape: shapeValue.items as number[], dataOffset };
}

export interface WriteNpyOptions {
  /** rows x dims by default (data.length / dims). Any shape may be written (for tests of errors). */
  readonly shape?: readonly number[];
  /** Default '<f4'. Written verbatim, the data bytes are not converted (for tests of errors). */
  readonly descr?: string;
  readonly fortranOrder?: boolean;
  /** Format version 1, 2 or 3; default 1. */
  readonly version?: 1 | 2 | 3;
}

/** Builds the bytes of a `.npy` file holding `data` (float32, C order, little-endian). */
export function encodeNpy(data: Float32Array | Uint8Array, dims: number, options: WriteNpyOptions = {}): Uint8Array {
  const version = options.version ?? 1;
  const elementBytes = data instanceof Float32Array ? 4 : 1;
  const shape = options.shape ?? [data.length / Math.max(1, dims), dims];
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  const dict = `{'descr': '${options.descr ?? '<f4'}', 'fortran_order': ${options.fortranOrder ? 'True' : 'False'}, 'shape': ${shapeText}, }`;
  const prefixLen = version === 1 ? 10 : 12;
  const dictBytes = new TextEncoder().encode(dict);
  // Pad with spaces and a final newline so the data starts at a multiple of 64 bytes (NumPy >= 1.x).
  const total = Math.ceil((prefixLen + dictBytes.length + 1) / 64) * 64;
  const headerLen = total - prefixLen;
  const out = new Uint8Array(total + data.length * elementBytes);
  out.set(NPY_MAGIC, 0);
  out[6] = version;
  out[7] = 0;
  const view = new DataView(out.buffer);
  if (version === 1) view.setUint16(8, headerLen, true);
  else view.setUint32(8, headerLen, true);
  out.set(dictBytes, prefixLen);
  out.fill(0x20, prefixLen + dictBytes.length, total - 1);
  out[total - 1] = 0x0a;
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), total);
  return out;
}

/** Writes a small `.npy` file in one go (tests, tools). */
export async function writeNpy(path: string, data: Float32Array, dims: number, options: WriteNpyOptions = {}): Promise<void> {
  await writeFile(path, encodeNpy(data, dims, options));
}

// --- a minimal parser for the Python literals NumPy writes in headers ---

class PyTuple {
  constructor(readonly items: PyValue[]) {}
}
type PyValue = string | number | boolean | null | PyTuple | PyValue[] | { [key: string]: PyValue };

function formatPy(v: PyValue): string {
  if (typeof v === 'string') return `'${v}'`;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return String(v);
  if (v instanceof PyTuple) return v.items.length === 1 ? `(${formatPy(v.items[0])},)` : `(${v.items.map(formatPy).join(', ')})`;
  if (Array.isArray(v)) return `[${v.map(formatPy).join(', ')}]`;
  return `{${Object.entries(v)
    .map(([k, x]) => `'${k}': ${formatPy(x)}`)
    .join(', ')}}`;
}

class PyLiteralParser {
  private pos = 0;

  constructor(private readonly text: string) {}

  parseTop(): PyValue {
    const v = this.value();
    this.ws();
    if (this.pos < this.text.length) throw this.error('unexpected trailing characters');
    return v;
  }

  private error(what: string): Error {
    return new Error(`cannot parse .npy header (${what} at offset ${this.pos}): ${JSON.stringify(this.text.trim())}`);
  }

  private ws(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }

  private value(): PyValue {
    this.ws();
    const c = this.text[this.pos];
    if (c === '{') return this.dict();
    if (c === '(') return new PyTuple(this.sequence('(', ')'));
    if (c === '[') return this.sequence('[', ']');
    if (c === "'" || c === '"') return this.string();
    const m = /^(?:True|False|None|[-+]?\d+L?)/.exec(this.text.slice(this.pos));
    if (!m) throw this.error('unexpected token');
    this.pos += m[0].length;
    if (m[0] === 'True') return true;
    if (m[0] === 'False') return false;
    if (m[0] === 'None') return null;
    return Number(m[0].replace(/L$/, ''));
  }

  private string(): string {
    const quote = this.text[this.pos++];
    let out = '';
    while (this.pos < this.text.length && this.text[this.pos] !== quote) {
      if (this.text[this.pos] === '\\') this.pos++;
      out += this.text[this.pos++];
    }
    if (this.pos >= this.text.length) throw this.error('unterminated string');
    this.pos++;
    return out;
  }

  private sequence(open: string, close: string): PyValue[] {
    this.pos++; // open
    const items: PyValue[] = [];
    for (;;) {
      this.ws();
      if (this.text[this.pos] === close) {
        this.pos++;
        return items;
      }
      items.push(this.value());
      this.ws();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== close) throw this.error(`expected ',' or '${close}' after ${open}...`);
    }
  }

  private dict(): { [key: string]: PyValue } {
    this.pos++;
    const out: { [key: string]: PyValue } = {};
    for (;;) {
      this.ws();
      if (this.text[this.pos] === '}') {
        this.pos++;
        return out;
      }
      const key = this.value();
      if (typeof key !== 'string') throw this.error('dictionary key is not a string');
      this.ws();
      if (this.text[this.pos] !== ':') throw this.error("expected ':'");
      this.pos++;
      out[key] = this.value();
      this.ws();
      if (this.text[this.pos] === ',') this.pos++;
      else if (this.text[this.pos] !== '}') throw this.error("expected ',' or '}'");
    }
  }
}
