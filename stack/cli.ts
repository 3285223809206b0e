// Usage: tsx stack/cli.ts up|down|status|configure-registry [<url>]
import { configureRegistry } from './registry/registry.ts';
import { ensureStack, stackDir, stackStatus, stopStack } from './stack.ts';

const log = (msg: string): void => console.log(`  ${msg}`);
const seconds = (start: number): string => `${((performance.now() - start) / 1000).toFixed(1)}s`;

async function main(command: string | undefined): Promise<number> {
  const start = performance.now();
  switch (command) {
    case 'up': {
      console.log(`stack up (data in ${stackDir()})`);
      const info = await ensureStack({ log });
      console.log(`stack ready in ${seconds(start)}`);
      console.log(`KAFKA_BROKERS=${info.kafkaBrokers.join(',')}`);
      console.log(`SCHEMA_REGISTRY_URL=${info.schemaRegistryUrl}`);
      console.log(`POSTGRES_SERVER_URL=${info.postgresServerUrl}`);
      console.log(`S3_ENDPOINT=${info.s3Endpoint}`);
      return 0;
    }
    case 'down':
      console.log('stack down');
      await stopStack({ log });
      console.log(`stopped in ${seconds(start)}`);
      return 0;
    case 'status': {
      const status = await stackStatus();
      for (const [name, { up, detail }] of Object.entries(status)) {
        console.log(`${name.padEnd(9)} ${up ? 'up  ' : 'DOWN'} ${detail}`);
      }
      return Object.values(status).every((s) => s.up) ? 0 : 1;
    }
    case 'configure-registry': {
      // What docker-compose.yml runs once before the service: the registry settings `up` gives its own registry.
      const url = process.argv[3] ?? process.env.SCHEMA_REGISTRY_URL;
      if (!url) {
        console.error('usage: tsx stack/cli.ts configure-registry [<registry url>] (or SCHEMA_REGISTRY_URL)');
        return 2;
      }
      await configureRegistry(url);
      console.log(`registry ${url}: compatibility BACKWARD (global and every subject without a level of its own)`);
      return 0;
    }
    default:
      console.error('usage: tsx stack/cli.ts up|down|status|configure-registry');
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  },
);
