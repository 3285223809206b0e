/**
 * The deepest nesting of arrays and objects a JSON body (or JSON text inside one) may have. No body of this API comes
 * near it (a product is 3 levels deep, a platform order in a webhook about 5); what is deeper is refused before any
 * recursive code (JSON.stringify, schema checks, canonical forms) could exhaust the call stack on it.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether JSON text nests arrays and objects deeper than `max`: one loop over its bytes (or UTF-16 code units), no
 * parse and no recursion; brackets inside strings do not count. Invalid JSON is left for the parser to refuse. Bytes
 * work because every byte of a multi-byte UTF-8 character is 0x80 or above, never a quote or a bracket.
 */
export function nestsDeeperThan(json: Uint8Array | string, max = MAX_JSON_DEPTH): boolean {
  const text = typeof json === 'string';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const unit = text ? json.charCodeAt(i) : json[i]!;
    if (inString) {
      if (unit === BACKSLASH) i++;
      else if (unit === QUOTE) inString = false;
    } else if (unit === QUOTE) inString = true;
    else if (unit === OPEN_ARRAY || unit === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (unit === CLOSE_ARRAY || unit === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** The 400 (`bad_request`) a request body nested deeper than MAX_JSON_DEPTH gets, or null when it is not. */
export function tooDeepBody(body: Uint8Array): Error | null {
  if (!nestsDeeperThan(body)) return null;
  return Object.assign(new Error(`the request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`), {
    statusCode: 400,
  });
}
