import { CLIENT_CLOSED_REQUEST, HttpError } from './errors.js';

/**
 * Reads a request body as JSON with a byte cap.
 *
 * Content type: `application/json` (any parameters) and `application/*+json` are accepted, and
 * so is a missing Content-Type when the body parses (scripts and `curl --data-binary` without
 * `-H` should not need ceremony). Anything else, notably curl's default
 * `application/x-www-form-urlencoded` for `-d`, is 415: guessing would hide a client bug.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  const contentType = request.headers.get('content-type');
  if (contentType !== null && !isJson(contentType)) {
    throw new HttpError(415, 'unsupported_media_type', `Content-Type [${contentType}] is not supported; send application/json`);
  }

  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes, Number(declared));

  const bytes = await readCapped(request, maxBytes);
  if (bytes.byteLength === 0) throw new HttpError(400, 'parse_error', 'request body is required');

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(400, 'parse_error', 'request body is not valid UTF-8');
  }
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

function tooLarge(maxBytes: number, declared?: number): HttpError {
  const size = declared === undefined ? 'more than' : `${declared} bytes, more than`;
  return new HttpError(413, 'request_entity_too_large', `request body is ${size} the limit of ${maxBytes} bytes`, { max_bytes: maxBytes }, { Connection: 'close' });
}
