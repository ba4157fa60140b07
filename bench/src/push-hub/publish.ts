/** The HTTP publish every Node hub of the push-hub benchmark takes: a POST answered 202, on a kept-alive socket. */
import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

export function post(port: number, path: string, body: string, contentType: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 202
            ? resolve()
            : reject(new Error(`publish to :${port}${path}: ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
