import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { jsonEndingWithText } from '../../http/streamed-json.ts';

const fields = { id: 'a1', count: 3, missing: null, when: '2025-01-02T03:04:05.000Z' };

describe('JSON ending with a text written as it is sent', () => {
  it.each([
    ['nothing', []],
    ['one piece', ['[{"title":"Mug"}]']],
    ['quotes, backslashes, controls and line separators', ['{"a":"\\"x\\"\\\\', '\n\t\u0000\u2028', '"}']],
    ['astral characters', ['😀', 'ü', '\ud83d\ude00']],
    ['pieces well past one write', Array.from({ length: 5_000 }, (_, i) => `{"title":"Product ${i}","d":"${'é'.repeat(i % 50)}"},`)],
  ])('writes the bytes JSON.stringify writes, for %s', async (_, pieces) => {
    const written = await text(jsonEndingWithText(fields, 'payload_json', pieces));
    expect(written).toBe(JSON.stringify({ ...fields, payload_json: pieces.join('') }));
  });

  it('takes the pieces only as it writes them', async () => {
    let taken = 0;
    function* pieces() {
      for (let i = 0; i < 100; i++) {
        taken++;
        yield 'x'.repeat(10_000);
      }
    }
    const stream = jsonEndingWithText(fields, 'payload_json', pieces());
    expect(taken).toBe(0);
    const written = await text(stream);
    expect(taken).toBe(100);
    expect(JSON.parse(written).payload_json).toHaveLength(1_000_000);
  });

  it('refuses a key that is among the fields: it would not be last', () => {
    expect(() => jsonEndingWithText({ payload_json: 'x' }, 'payload_json', [])).toThrow(/written last/);
  });
});
