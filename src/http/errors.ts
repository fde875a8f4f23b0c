/**
 * Errors the HTTP layer answers with, and their JSON body. Every error body has the
 * Elasticsearch shape `{error: {type, reason, ...}, status}` so one client-side parser serves
 * both the native and the ES-compatible routes.
 */

export interface ValidationIssue {
  /** Field path in the request body, e.g. `knn.query_vector[3]`; `""` for the body itself. */
  readonly path: string;
  readonly reason: string;
}

/** Issues listed in one error body (a 10k-element vector of strings must not make a 1 MB error). */
export const MAX_REPORTED_ISSUES = 20;

/** A parse that either gives a value or the HttpError (400) to answer with. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: HttpError };

/** Every `error.type` the server answers with (the OpenAPI document lists them). */
export const ERROR_TYPES = [
  'validation_error',
  'parse_error',
  'request_entity_too_large',
  'unsupported_media_type',
  'index_not_found_exception',
  'resource_already_exists_exception',
  'invalid_index_name_exception',
  'mapper_parsing_exception',
  'not_found',
  'method_not_allowed',
  'illegal_argument_exception',
  'refresh_failed',
  'illegal_state_exception',
  'version_conflict_engine_exception',
  'document_parsing_exception',
  'document_missing_exception',
  'action_request_validation_exception',
  'es_rejected_execution_exception',
  'cluster_block_exception',
  'search_timeout',
  'client_closed_request',
  'shutting_down',
  'search_error',
  'internal_error',
] as const;

export type ErrorType = (typeof ERROR_TYPES)[number];

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly reason: string,
    /** Extra fields merged into `error` (e.g. `path`, `issues`, `index`). */
    readonly details: Readonly<Record<string, unknown>> = {},
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(reason);
    this.name = 'HttpError';
  }

  body(): { error: Record<string, unknown>; status: number } {
    return { error: { type: this.type, reason: this.reason, ...this.details }, status: this.status };
  }
}

/** Status used when the client went away; never seen by the client, but counted and logged. */
export const CLIENT_CLOSED_REQUEST = 499;

export function validationError(issues: readonly ValidationIssue[], total = issues.length): HttpError {
  const first = issues[0] ?? { path: '', reason: 'invalid request' };
  const where = first.path === '' ? 'request body' : `[${first.path}]`;
  const more = total > 1 ? ` (and ${total - 1} more issue${total > 2 ? 's' : ''})` : '';
  return new HttpError(400, 'validation_error', `${where} ${first.reason}${more}`, {
    path: first.path,
    issues,
    ...(total > issues.length ? { issues_truncated: total - issues.length } : {}),
  });
}

export function indexNotFound(name: string): HttpError {
  const reason = `no such index [${name}]`;
  return new HttpError(404, 'index_not_found_exception', reason, {
    index: name,
    root_cause: [{ type: 'index_not_found_exception', reason, index: name }],
  });
}

/**
 * A write that failed for want of disk space (ENOSPC, or EDQUOT: over quota), as Elasticsearch
 * answers writes once a disk passes its flood stage: 429 `cluster_block_exception`, to be retried
 * once space is freed. Null for any other failure.
 */
export function diskFull(e: unknown, index: string): HttpError | null {
  // An error thrown on an executor worker (a segment being built) keeps its code (WorkerFailure).
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code !== 'ENOSPC' && code !== 'EDQUOT') return null;
  return new HttpError(
    429,
    'cluster_block_exception',
    `index [${index}]: no space left on the device (${(e as Error).message}); the write was not acknowledged: retry once space is freed`,
    { index },
    { 'Retry-After': '5' },
  );
}

/** Why a search's AbortSignal fired; the handler maps each to its status. */
export class SearchTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`search did not finish within ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

export class ClientClosedError extends Error {
  constructor() {
    super('client closed the connection before the search finished');
    this.name = 'AbortError';
  }
}

export class ShuttingDownError extends Error {
  constructor(detail = 'server is shutting down') {
    super(detail);
    this.name = 'AbortError';
  }
}
