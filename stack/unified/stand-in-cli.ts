// `tsx stack/unified/stand-in-cli.ts`: the connection provider's stand-in for development, until Ctrl-C. It accepts the
// service's UNIFIED_API_TOKEN (default dev-unified-token) as its bearer token.
import { envPort } from '../process-control.ts';
import { startUnifiedStandIn } from './stand-in.ts';

const standIn = await startUnifiedStandIn({
  port: envPort('UNIFIED_STAND_IN_PORT', 18090),
  token: process.env.UNIFIED_API_TOKEN || undefined,
  workspaceSecret: process.env.UNIFIED_WORKSPACE_SECRET || undefined,
});
console.log(`unified stand-in listening on ${standIn.url} (bearer token: ${standIn.token})`);
console.log(`UNIFIED_API_URL=${standIn.url}`);
console.log(`UNIFIED_WORKSPACE_SECRET=${standIn.workspaceSecret} (signs its native deliveries)`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void standIn.close().then(() => process.exit(0));
  });
}
