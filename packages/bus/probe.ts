import { connectNats } from './src/index.ts';
const t = Date.now();
await connectNats({ servers: 'tls://127.0.0.1:4299', tls: { ca: 'x' }, timeout: 2000 }).catch((e) =>
  console.log('rejected after', Date.now() - t, e.message),
);
