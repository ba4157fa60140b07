/** POST /api/stream: reads a body that came without content length, as a stream of bytes. */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'hello.stream',
  handleEvent: async (_headers, request) => {
    const stream = request.getStream();
    if (!stream) return { streamed: false, body: request.getBody() ?? null };
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const data = Buffer.concat(chunks);
    return {
      streamed: true,
      stream_route: request.getStreamRoute(),
      size: data.length,
      text: data.toString('utf8'),
    };
  },
});
