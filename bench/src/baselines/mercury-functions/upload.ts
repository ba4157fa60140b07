/**
 * A multipart upload answered with the file's name and size, on the Gatehouse side of
 * mercury.bench.ts (Mercury's side: bench/mercury/.../Upload.java, which reads its stream to the end;
 * Gatehouse hands the function the file's bytes already read).
 */
import { defineFunction } from '@gatehouse/functions';

export default defineFunction({
  route: 'bench.upload',
  instances: 50,
  handleEvent: (_headers, request) => {
    const file = request.getFiles()[0];
    if (file === undefined) throw new Error('not a multipart upload');
    return { name: file.fileName, size: file.size };
  },
});
