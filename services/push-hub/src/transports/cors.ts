/** What the preflights of the hub's browser-facing endpoints allow (the policy is CORS_ALLOWED_ORIGINS). */
import type { PreflightRules } from '@gatehouse/service-kit';

const requestHeaders = 'content-type, authorization, last-event-id';

/** SSE, long-polling and socket.io: GET (socket.io's polling also POSTs). */
export const connectionPreflight: PreflightRules = { methods: 'GET', headers: requestHeaders };
/** Long-polling: its polls, and the DELETE a client closes its connection with. */
export const longpollPreflight: PreflightRules = { methods: 'GET, DELETE', headers: requestHeaders };
export const socketIoPreflight: PreflightRules = { methods: 'GET, POST', headers: requestHeaders };
/** PUT /_gw/v1/connection/…/subscriptions. */
export const subscriptionsPreflight: PreflightRules = { methods: 'PUT', headers: requestHeaders };
