/** The blacklist service as its own process: the session blacklist API on API_PORT, no public port. */
import { loadConfig, serviceMain } from '@gatehouse/service-kit';
import { connectStore, storeConfig } from '@gatehouse/store';
import { createBlacklistService } from './blacklist-service.ts';
import { blacklistConfig } from './config.ts';

const settings = { ...storeConfig, ...blacklistConfig };

await serviceMain('blacklist', async ({ logger, registry, health }) => {
  const config = loadConfig(settings);
  const store = await connectStore(config);
  if (store.kind === 'memory')
    logger.warn('STORE=memory: entries live in this process only; hubs in other processes never see them');
  health.addCheck('store', () => store.ping());
  const service = createBlacklistService(config, { store, logger, registry });
  return { services: [service], closeables: [store] };
});
