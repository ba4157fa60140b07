/**
 * How many commands a Redis server has processed (`INFO stats` total_commands_processed), read over
 * one plain connection: a benchmark reads it before and after a run to count the store round trips
 * the run cost, a figure the box's load does not move. The reads themselves count one each.
 */
import { connect } from 'node:net';

export function redisCommandsProcessed(url: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    let text = '';
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer from Redis at ${url}`)));
    socket.on('connect', () => socket.write('INFO stats\r\n'));
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      // A bulk reply: `$<length>\r\n`, that many bytes, `\r\n`.
      const head = /^\$(\d+)\r\n/.exec(text);
      if (!head || text.length < head[0].length + Number(head[1]) + 2) return;
      socket.end();
      const found = /total_commands_processed:(\d+)/.exec(text);
      if (found) resolve(Number(found[1]));
      else reject(new Error(`no total_commands_processed in INFO stats of ${url}`));
    });
    socket.on('error', reject);
  });
}
