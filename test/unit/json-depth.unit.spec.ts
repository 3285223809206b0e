import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../http/json-depth.ts';

const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
const bothForms = (json: string) => [json, Buffer.from(json, 'utf8')];

describe('nestsDeeperThan', () => {
  it.each([
    ['arrays', arrays],
    ['objects', objects],
  ])('%s: MAX_JSON_DEPTH levels pass, one more does not', (_name, nested) => {
    for (const json of bothForms(nested(MAX_JSON_DEPTH))) expect(nestsDeeperThan(json)).toBe(false);
    for (const json of bothForms(nested(MAX_JSON_DEPTH + 1))) expect(nestsDeeperThan(json)).toBe(true);
  });

  it('counts the deepest point, not the brackets in all (siblings do not add up)', () => {
    const siblings = `[${Array.from({ length: 1_000 }, () => arrays(MAX_JSON_DEPTH - 1)).join(',')}]`;
    expect(nestsDeeperThan(siblings)).toBe(false);
    expect(nestsDeeperThan(`{"a":[1,{"b":[2]}],"c":{"d":[[3]]}}`, 3)).toBe(true);
    expect(nestsDeeperThan(`{"a":[1,{"b":2}],"c":{"d":[3]}}`, 3)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes and backslashes included', () => {
    const inString = JSON.stringify({ text: '['.repeat(1_000), quoted: '"[[[[', slash: '\\', then: '{{{{' });
    for (const json of bothForms(inString)) expect(nestsDeeperThan(json, 1)).toBe(false);
    // After an escaped backslash the string ends: the brackets after it count.
    for (const json of bothForms(`["\\\\", [[1]]]`)) expect(nestsDeeperThan(json, 2)).toBe(true);
  });

  it('reads multi-byte UTF-8 as bytes without mistaking any for a quote or a bracket', () => {
    const json = JSON.stringify({ title: 'Tasse à café ☕ 𝄞 [', nested: [[['ü']]] });
    for (const form of bothForms(json)) {
      expect(nestsDeeperThan(form, 4)).toBe(false);
      expect(nestsDeeperThan(form, 3)).toBe(true);
    }
  });

  it('answers for 100 000 levels, arrays and objects, without exhausting the stack', () => {
    for (const json of [...bothForms(arrays(100_000)), ...bothForms(objects(100_000))]) expect(nestsDeeperThan(json)).toBe(true);
  });
});
