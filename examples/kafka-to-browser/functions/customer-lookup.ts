/**
 * Flow task `customer.lookup`: the customer `id` through the REST call GET {CUSTOMER_API_URL}/{id}
 * (default: this application's own endpoint on the engine's port 8085). An unknown customer is
 * `{ id, known: false }`, so its order still reaches the browsers; any other failure fails the
 * task, and the flow adapter runs the record again (kafka.flow.max.retries).
 */
import { AppException, defineFunction, type TaskBody } from '@gatehouse/functions';

const defaultApi = 'http://127.0.0.1:8085/api/customers';
/** A customer is a few fields: a larger answer is not one. */
const maxAnswerBytes = 16 * 1024;
const timeoutMs = 5000;

export default defineFunction<TaskBody>({
  route: 'customer.lookup',
  handleEvent: async (_headers, body) => {
    const id = body['id'];
    if (typeof id !== 'string' || id === '') throw new AppException(400, 'the order names no customer');
    // Read per call: a test learns the engine's ephemeral port only after the engine started.
    const api = process.env['CUSTOMER_API_URL'] ?? defaultApi;
    const res = await fetch(`${api}/${encodeURIComponent(id)}`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    if (res.status === 404) return { id, known: false };
    if (!res.ok) throw new AppException(502, `customer API answered ${res.status}`);
    if (Buffer.byteLength(text) > maxAnswerBytes)
      throw new AppException(502, 'customer API answer too large');
    return { ...(JSON.parse(text) as Record<string, unknown>), known: true };
  },
});
