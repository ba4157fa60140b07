/** `make run`: the embedded gateway on its defaults. Ctrl-C (SIGINT) or SIGTERM stops it cleanly. */
import { ConfigError, onShutdownSignal, releaseStartUpMemory } from '@gatehouse/service-kit';
import { startEmbeddedGateway } from './embedded-gateway.ts';

try {
  const gateway = await startEmbeddedGateway();
  onShutdownSignal(gateway.stop, gateway.logger);
  releaseStartUpMemory();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}
