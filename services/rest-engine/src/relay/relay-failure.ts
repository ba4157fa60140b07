/**
 * What the client is told when the HTTP relay's upstream fails: 504 when it timed out, else 502,
 * each with a fixed message. The cause (`connect ECONNREFUSED 10.0.0.7:8080`, a reset, a short
 * answer) names internal addresses and ports, so it goes to the log only. Mercury answers 500 with
 * the cause's message (reference §3.4); a bad gateway is a 502 and an internal address is nobody's
 * business, so the gateway differs (docs/security.md).
 */
export interface RelayFailure {
  status: 502 | 504;
  message: string;
}

const timeoutCodes = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

export const badGateway: RelayFailure = { status: 502, message: 'Bad gateway' };
export const gatewayTimeout: RelayFailure = { status: 504, message: 'Gateway timeout' };

export function relayFailure(err: unknown): RelayFailure {
  return timeoutCodes.has(codeOf(err)) || timeoutCodes.has(codeOf((err as Error | undefined)?.cause))
    ? gatewayTimeout
    : badGateway;
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : '';
}
