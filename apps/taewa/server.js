// Taewa: the CPU-bound toy service of seed study 000. One process, Node's built-in
// http module only, so that a variant's CPU limit is the only thing that scales it.
'use strict';
const http = require('http');

const PREFIX = 'The result of this run is :  ';
const ANSWER_LENGTH = 44;

function work(n) {
  let result = 0;
  for (let i = 0; i < n; i++) result += Math.random() * Math.random();
  return (PREFIX + result).slice(0, ANSWER_LENGTH);
}

function iterations(url) {
  const raw = new URL(url, 'http://taewa').searchParams.get('n');
  if (raw === null || raw === '') return 0;
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

function createServer() {
  return http.createServer((req, res) => {
    const body = work(iterations(req.url));
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
}

if (require.main === module) {
  const port = Number(process.env.PORT || 8080);
  const server = createServer();
  server.keepAliveTimeout = 65000;
  server.listen(port, process.env.HOST || '0.0.0.0', () => console.log(`taewa listening on ${port}`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

module.exports = { createServer, work, iterations, ANSWER_LENGTH };
