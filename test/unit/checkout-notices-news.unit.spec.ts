import { describe, expect, it } from 'vitest';
import { checkoutNoticesNews } from '../../consumers/checkout/checkout-notifier.ts';

describe("checkoutNoticesNews: what a projection's progress means to the checkout notifier", () => {
  it.each([
    ['the checkout read model moved, no session completed', 'checkout', false, { wake: true, sessionsChanged: true }],
    ['the checkout read model moved, a session completed', 'checkout', true, { wake: true, sessionsChanged: true }],
    ['the orders moved, no session completed', 'oms', false, { wake: false, sessionsChanged: false }],
    ['the orders moved, a session completed', 'oms', true, { wake: true, sessionsChanged: false }],
  ])('%s', (_, projection, anyCompleted, expected) => {
    expect(checkoutNoticesNews({ projection, anyCompleted })).toEqual(expected);
  });
});
