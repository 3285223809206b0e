import { nestsDeeperThan } from '../http/json-depth.ts';

/**
 * `npx tsx bench/json-depth.ts`: what the depth check costs before the JSON parser, beside the parse it guards
 * (strict UTF-8 decoding and JSON.parse, as http/json-body.ts does), per body, on an ordinary product body and on
 * bodies at the service's size limits. CPU-bound and single-threaded: run it on an otherwise quiet machine.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true });

const product = {
  title: 'Espresso cup, stoneware, 90 ml',
  description: 'A thick-walled cup that keeps an espresso hot. Dishwasher safe. Made in Portugal — glazed by hand.',
  category: 'kitchen',
  sku: 'CUP-ESP-090-BLU',
  brand: 'Acme',
  status: 'ACTIVE',
  template_id: '5b0f6d3e-0d5c-4c0e-8a59-0b6a4f1d2c3e',
  attributes: { '0c6e1f4a-3b2d-4e5f-9a8b-7c6d5e4f3a2b': 'blue', '1d7f2a5b-4c3e-4f6a-8b9c-8d7e6f5a4b3c': '90' },
};
const bodyOf = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');
const bodies: [string, Buffer][] = [
  ['product body', bodyOf(product)],
  ['1 MiB body (BODY_LIMIT_BYTES)', bodyOf(Array.from({ length: 2_600 }, () => product))],
  [
    '64 MiB bulk body (BULK_BODY_LIMIT_BYTES)',
    bodyOf({ job_type: 'BULK_IMPORT', payload: Array.from({ length: 166_000 }, () => product) }),
  ],
];

/** Nanoseconds per call, the median of `rounds` timed rounds of `perRound` calls (after as many untimed). */
function nsPerCall(run: () => unknown, perRound: number, rounds = 15): number {
  const times: number[] = [];
  for (let round = 0; round < rounds * 2; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < perRound; i++) run();
    if (round >= rounds) times.push(Number(process.hrtime.bigint() - start) / perRound);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

const format = (ns: number) =>
  ns >= 1e6 ? `${(ns / 1e6).toFixed(1)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
console.log(`node ${process.version}`);
console.log('body | bytes | depth check | decode + JSON.parse | check / parse');
for (const [name, body] of bodies) {
  const perRound = Math.max(1, Math.floor(2_000_000 / body.length));
  const check = nsPerCall(() => nestsDeeperThan(body), perRound);
  const parse = nsPerCall(() => JSON.parse(utf8.decode(body)), perRound);
  console.log(`${name} | ${body.length} | ${format(check)} | ${format(parse)} | ${((100 * check) / parse).toFixed(0)} %`);
}
