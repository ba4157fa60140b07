// History: the newest events of a type, newest first, from the event buffer and past it the broker;
// for clients on the public edge and for the operator console on the internal API.
export { createHistoryApi, HISTORY_PATH } from './history-api.ts';
export { createOperatorHistory, OPERATOR_HISTORY_PATH } from './operator-history.ts';
export { readHistory, type HistorySource } from './history-reader.ts';
