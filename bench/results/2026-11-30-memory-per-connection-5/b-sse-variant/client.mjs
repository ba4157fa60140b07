import net from 'node:net';
const [port, n] = [Number(process.argv[2]), Number(process.argv[3])];
const socks = [];
let i = 0;
async function one(k) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: `127.0.${1 + (k % 200)}.${2 + (Math.floor(k / 200) % 250)}` });
    s.on('error', reject);
    s.once('data', () => resolve());
    s.write('GET /sse HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
    socks.push(s);
  });
}
for (let b = 0; b < n; b += 500) await Promise.all(Array.from({ length: Math.min(500, n - b) }, (_, j) => one(b + j)));
process.send?.('ready');
console.log('connected', socks.length);
setInterval(() => {}, 1000);
