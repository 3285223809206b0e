import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { acpProductProblems } from '../support/acp-feed-schema.ts';

/**
 * The issue asked for `is_eligible_checkout: true` on feed lines a session can sell. The ACP feed schema we publish
 * against (test/fixtures/acp) has no such field and admits no other, so the lines carry none (docs/decisions.md,
 * "Agentic checkout"). Should a newer schema copied in define it, this fails and the feed must set it.
 */
const defs = (
  JSON.parse(readFileSync(new URL('../fixtures/acp/schema.feed.json', import.meta.url), 'utf8')) as { $defs: Record<string, any> }
).$defs;

describe('checkout eligibility in the ACP feed', () => {
  it('has no field in the published Product or Variant, and a line carrying one is refused', () => {
    for (const name of ['Product', 'Variant']) {
      expect(defs[name].additionalProperties, name).toBe(false);
      expect(
        Object.keys(defs[name].properties).filter((key) => /checkout|eligib/i.test(key)),
        name,
      ).toEqual([]);
    }
    expect(acpProductProblems({ id: 'p1', title: 'Cup', variants: [], is_eligible_checkout: true }).join(' ')).toMatch(
      /additional properties/,
    );
  });
});
