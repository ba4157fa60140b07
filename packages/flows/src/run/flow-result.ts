/**
 * How a flow instance answers its caller, once: the `output.*` of the first `response` or `end`
 * task, or an abort (timeout, a failure no handler took, an engine error) with a status and message.
 */
export type FlowResult = FlowResponse | FlowAbort;

export interface FlowResponse {
  kind: 'response';
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface FlowAbort {
  kind: 'abort';
  status: number;
  /** Text, or the error body a failed function returned (a map stays a map). */
  message: unknown;
  stack?: string;
}

/** The body Mercury answers an abort with. */
export function abortBody(abort: FlowAbort): Record<string, unknown> {
  return { type: 'error', status: abort.status, message: abort.message };
}

/** `output.*` of a response/end task → the answer: status (default 200), headers as text, body. */
export function responseOf(output: Record<string, unknown>, warn: (msg: string) => void): FlowResponse {
  let status = 200;
  const wanted = output['status'];
  if (wanted !== undefined && wanted !== null) {
    const n = Number(wanted);
    if (Number.isInteger(n) && n >= 100 && n <= 599) status = n;
    else warn(`Invalid output.status ${String(wanted)} ignored`);
  }
  const headers: Record<string, string> = {};
  const header = output['header'];
  if (header !== null && typeof header === 'object' && !Array.isArray(header)) {
    for (const [name, value] of Object.entries(header)) {
      if (value !== null && value !== undefined) headers[name.toLowerCase()] = textOf(value);
    }
  }
  return { kind: 'response', status, headers, body: output['body'] };
}

function textOf(value: unknown): string {
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
