/**
 * What the commands share for reading their flags: the usage error (the command prints it with
 * its usage text and exits 2) and integer values, written as sizes are (`1_000_000`, `1e6`,
 * `1M`, `500k`).
 */

/** A mistake in the command line, not a failure of the work: exit code 2 and the usage text. */
export class UsageError extends Error {}

/** `--name`'s value as an integer of at least `min` (default 1); undefined when not given. */
export function integerFlag(name: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(?:e(\d+)|([kKmM]))?$/.exec(value.trim().replace(/_/g, ''));
  let v = NaN;
  if (m) {
    v = Number(m[1]);
    if (m[2]) v *= 10 ** Number(m[2]);
    if (m[3]) v *= m[3].toLowerCase() === 'k' ? 1e3 : 1e6;
  }
  if (!Number.isSafeInteger(v) || v < min) throw new UsageError(`--${name} must be ${min === 1 ? 'a positive integer' : `an integer >= ${min}`}, got "${value}"`);
  return v;
}

/** `--name`'s value as an integer of at least `min`; a usage error when not given. */
export function requiredIntegerFlag(name: string, value: string | undefined, min = 1): number {
  const v = integerFlag(name, value, min);
  if (v === undefined) throw new UsageError(`--${name} is required`);
  return v;
}
