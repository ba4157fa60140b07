/** The malformed-input corpus, per parser; add cases to the module of their parser. */
import { chunkedCases } from './chunked.ts';
import type { CorpusCase } from './corpus-case.ts';
import { formCases } from './forms.ts';
import { jsonCases } from './json.ts';
import { multipartCases } from './multipart.ts';
import { responseCases } from './responses.ts';
import { upgradeCases } from './upgrades.ts';
import { websocketCases } from './websocket.ts';
import { xmlCases } from './xml.ts';

export type { CorpusCase } from './corpus-case.ts';

export const corpus: Record<string, CorpusCase[]> = {
  multipart: multipartCases,
  json: jsonCases,
  xml: xmlCases,
  forms: formCases,
  chunked: chunkedCases,
  websocket: websocketCases,
  upgrades: upgradeCases,
  responses: responseCases,
};
