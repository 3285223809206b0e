// Preloaded into the service by `npm run bench:hops` (`--import`, every thread): notes, with the wall-clock time, every
// Kafka request from its send to its answer (the client's `plt:kafka:connections:api` channel), every `pg` query from
// its send to its result, every notice a `pg` client hears, and every HTTP request from its first byte read to its
// answer; each thread writes its own file into HOP_TRACE_DIR when it exits. Nothing of the service is changed but the
// timing of `pg`'s calls.
import dc from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { threadId } from 'node:worker_threads';

const dir = process.env.HOP_TRACE_DIR;
const KEPT = 50_000;
const noted = [];
const now = () => performance.timeOrigin + performance.now();
const note = (kind, name, start) => {
  noted.push({ kind, name, start, end: now() });
  if (noted.length > KEPT * 1.5) noted.splice(0, noted.length - KEPT);
};

if (dir) {
  const started = new WeakMap();
  dc.tracingChannel('plt:kafka:connections:api').subscribe({
    start: (context) => started.set(context, now()),
    end: () => undefined,
    asyncStart: (context) => {
      if (context.operation === 'send') note('kafka', context.apiKey, started.get(context) ?? now());
    },
    asyncEnd: () => undefined,
    error: () => undefined,
  });
  dc.subscribe('http.server.request.start', ({ request }) => started.set(request, now()));
  dc.subscribe('http.server.response.finish', ({ request }) =>
    note('http', `${request.method} ${request.url}`, started.get(request) ?? now()),
  );

  const pg = createRequire(join(process.cwd(), 'package.json'))('pg');
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function tracedQuery(config, values, callback) {
    const start = now();
    const text = (typeof config === 'string' ? config : (config?.text ?? '')).replace(/\s+/g, ' ').slice(0, 80);
    const traced =
      (answered) =>
      (...args) => {
        note('pg', text, start);
        return answered(...args);
      };
    if (typeof config?.callback === 'function') config.callback = traced(config.callback);
    if (typeof values === 'function') values = traced(values);
    else if (typeof callback === 'function') callback = traced(callback);
    const result = query.call(this, config, values, callback);
    if (typeof result?.then === 'function')
      result.then(
        () => note('pg', text, start),
        () => undefined,
      );
    return result;
  };

  const emit = pg.Client.prototype.emit;
  pg.Client.prototype.emit = function tracedEmit(event, message, ...rest) {
    if (event === 'notification') {
      const heard = now();
      noted.push({ kind: 'pg', name: `notice ${message?.channel} ${String(message?.payload).slice(0, 40)}`, start: heard, end: heard });
    }
    return emit.call(this, event, message, ...rest);
  };

  process.on('exit', () => writeFileSync(join(dir, `hops-${process.pid}-${threadId}.json`), JSON.stringify(noted)));
}
