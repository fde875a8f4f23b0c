import type { IncomingMessage } from 'node:http';
import { CLIENT_CLOSED_REQUEST, HttpError } from './errors.js';
import { findVector, placeVector, type VectorPath } from './vectorJson.js';

/** Where a search body's query vector is, and its length: read straight into a Float32Array (vectorJson.ts). */
export interface BodyVector {
  readonly path: VectorPath;
  readonly dims: number;
}

/**
 * Reads a request body as JSON with a byte cap.
 *
 * Content type: `application/json` (any parameters) and `application/*+json` are accepted, and
 * so is a missing Content-Type when the body parses (scripts and `curl --data-binary` without
 * `-H` should not need ceremony). Anything else, notably curl's default
 * `application/x-www-form-urlencoded` for `-d`, is 415: guessing would hide a client bug.
 */
export async function readJsonBody(request: Request, maxBytes: number, incoming?: IncomingMessage, vector?: BodyVector): Promise<unknown> {
  const contentType = request.headers.get('content-type');
  if (contentType !== null && !isJson(contentType)) {
    throw new HttpError(415, 'unsupported_media_type', `Content-Type [${contentType}] is not supported; send application/json`);
  }

  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes, Number(declared));

  const bytes = incoming ? await readIncoming(incoming, maxBytes) : await readCapped(request, maxBytes);
  if (bytes.byteLength === 0) throw new HttpError(400, 'parse_error', 'request body is required');
  return parseJsonBody(bytes, vector);
}

/**
 * A body's bytes with a byte cap, for routes that parse it themselves (a document kept as sent,
 * an NDJSON `_bulk` body). `types` are the accepted media types besides JSON; no Content-Type is
 * accepted too.
 */
export async function readBodyBytes(request: Request, maxBytes: number, types: readonly string[] = []): Promise<Uint8Array> {
  const contentType = request.headers.get('content-type');
  if (contentType !== null && !isJson(contentType) && !types.includes(contentType.split(';', 1)[0]!.trim().toLowerCase()))
    throw new HttpError(415, 'unsupported_media_type', `Content-Type [${contentType}] is not supported; send ${[...types, 'application/json'].join(' or ')}`);
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes, Number(declared));
  const bytes = await readCapped(request, maxBytes);
  if (bytes.byteLength === 0) throw new HttpError(400, 'parse_error', 'request body is required');
  return bytes;
}

/**
 * A body's JSON; with `vector`, the array at its path read straight into a Float32Array when it
 * is one of `vector.dims` float32 numbers (vectorJson.ts), else left as JSON.parse gives it.
 * Throws a 400 HttpError for bad UTF-8 or bad JSON.
 */
export function parseJsonBody(bytes: Uint8Array, vector?: BodyVector): unknown {
  const found = vector ? findVector(bytes, vector.path, vector.dims) : null;
  if (found === null) return parseJson(decodeUtf8(bytes));
  let rest: unknown;
  try {
    // The vector's bytes are ASCII, so the parts around them are valid UTF-8 exactly when the body is.
    rest = JSON.parse(`${decodeUtf8(bytes.subarray(0, found.start), utf8Part)}0${decodeUtf8(bytes.subarray(found.end), utf8Part)}`);
  } catch (e) {
    if (e instanceof HttpError) throw e;
    // Not valid JSON: the whole body's parse says where.
    return parseJson(decodeUtf8(bytes));
  }
  placeVector(rest, vector!.path, found.vector);
  return rest;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** For the parts around a vector: a byte-order mark there is a character (which JSON.parse refuses), not one to drop. */
const utf8Part = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Uint8Array, decoder = utf8): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new HttpError(400, 'parse_error', 'request body is not valid UTF-8');
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new HttpError(400, 'parse_error', `request body is not valid JSON: ${(e as Error).message}`);
  }
}

function isJson(contentType: string): boolean {
  const mime = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mime === 'application/json' || (mime.startsWith('application/') && mime.endsWith('+json'));
}

async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  const stream = request.body;
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let step: Awaited<ReturnType<typeof reader.read>>;
    try {
      step = await reader.read();
    } catch (e) {
      // The upload broke off (client gone or a transport error): not a server fault.
      if (request.signal.aborted) throw new HttpError(CLIENT_CLOSED_REQUEST, 'client_closed_request', 'client closed the connection while sending the body');
      throw new HttpError(400, 'parse_error', `request body could not be read: ${(e as Error).message}`);
    }
    const { done, value } = step;
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Stop reading; the connection is closed after the 413 so the rest is never parsed.
      reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * The body straight from Node's request stream, as readCapped reads the web stream the adapter
 * would make of it. Why: reading a 20 KB search body through that web stream took 0.9 ms per
 * request (p50, warm 200k x 768, single stream: http.body in the profile); Node's own 'data'
 * events hand over the same bytes without the stream adaptation.
 */
function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  // Nothing else reads the stream; if something had, waiting for its 'end' would hang.
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const settle = (e: HttpError | null): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
      if (e) reject(e);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        // Stop reading; the connection is closed after the 413 so the rest is never parsed.
        incoming.pause();
        settle(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle(null);
    const gone = (): HttpError => new HttpError(CLIENT_CLOSED_REQUEST, 'client_closed_request', 'client closed the connection while sending the body');
    const onError = (e: Error): void => settle(incoming.aborted || !incoming.complete ? gone() : new HttpError(400, 'parse_error', `request body could not be read: ${e.message}`));
    const onClose = (): void => {
      if (!incoming.complete) settle(gone());
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

function tooLarge(maxBytes: number, declared?: number): HttpError {
  const size = declared === undefined ? 'more than' : `${declared} bytes, more than`;
  return new HttpError(413, 'request_entity_too_large', `request body is ${size} the limit of ${maxBytes} bytes`, { max_bytes: maxBytes }, { Connection: 'close' });
}
