// Correlated responses: the requests waiting, the two shapes, the way to the replica holding one.
export { type CorrelatedResponse, type PendingRequest, PendingResponses } from './pending-responses.ts';
export { startResponseConsumers } from './response-consumers.ts';
export { ResponseRouter } from './response-router.ts';
export { createResponsesEndpoint } from './responses-endpoint.ts';
