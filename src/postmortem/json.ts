/** Stored JSON columns are redacted TEXT; a malformed one must not stop a postmortem, so it reads as absent. */
export function parseStored<T>(json: string | null | undefined): T | undefined {
  if (!json) return undefined;
  try {
    return JSON.parse(json) as T;
  } catch {
    return undefined;
  }
}
