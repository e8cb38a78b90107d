/**
 * A tool call whose arguments the provider could not parse. OpenAI-compatible APIs send
 * `function.arguments` as a JSON *string* the model wrote; it can be truncated or invalid. Rather than
 * failing the whole turn, the provider returns the call with this marker as its `input`, and the loop
 * answers it with an error tool result (so the model can correct itself, like any tool failure).
 */
export interface InvalidToolArguments {
  invalidToolArguments: true;
  /** Exactly what the model sent, replayed verbatim when the conversation is sent back. */
  raw: string;
  /** Why it was rejected, suitable as the error tool result. */
  error: string;
}

export function isInvalidToolArguments(input: unknown): input is InvalidToolArguments {
  return (
    typeof input === 'object' &&
    input !== null &&
    (input as { invalidToolArguments?: unknown }).invalidToolArguments === true &&
    typeof (input as { raw?: unknown }).raw === 'string'
  );
}

/** Parse a JSON-object arguments string; anything else becomes an {@link InvalidToolArguments} marker. */
export function parseToolArguments(raw: string): unknown {
  // An empty string is how some servers encode "no arguments".
  if (raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
    return invalid(raw, 'the arguments must be a JSON object');
  } catch (err) {
    return invalid(raw, `the arguments are not valid JSON (${(err as Error).message})`);
  }
}

function invalid(raw: string, reason: string): InvalidToolArguments {
  return { invalidToolArguments: true, raw, error: `Invalid tool call: ${reason}. Call the tool again with a JSON object matching its schema.` };
}
