// History: the newest events of a type, newest first, from the event buffer and past it the broker.
export { createHistoryApi, HISTORY_PATH } from './history-api.ts';
export { readHistory, type HistorySource } from './history-reader.ts';
