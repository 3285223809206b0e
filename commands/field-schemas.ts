import { z } from 'zod';

/**
 * UUIDs are case-insensitive, but aggregates are keyed, and events compared, by the id's text: an upper-case
 * id would read the same Postgres row yet address another aggregate. Every id is lower-cased at the edge.
 */
export const uuid = z.guid().toLowerCase();

// With the u flag a surrogate pair is one code point, so only an unpaired surrogate is of category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Free text as Postgres can store it: a NUL character would be accepted into the log and then refused by every
 * read model. A lone UTF-16 surrogate (JSON "\ud800") is not text either: encoding would silently replace it.
 */
export const text = () =>
  z
    .string()
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL characters')
    .refine((value) => !LONE_SURROGATE.test(value), 'must not contain unpaired UTF-16 surrogates');
