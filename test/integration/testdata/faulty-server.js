// A Taewa look-alike that fails in the ways the validity tests need, chosen
// by the request's fault parameter; without one it answers as Taewa does, so
// the pack's health check and correctness probe pass. Deployed through the
// taewa pack's exec driver (app_source), so it is scheduled, registered and
// limited like the real service.
'use strict';
const http = require('http');

const ANSWER = 'The result of this run is :  0.2500000000000';
let emptyServed = 0;
let errorCount = 0;
const queue = [];
let busy = false;

// fault=empty: full answers for the first 20 requests, then 200 with an
// empty body, as a cache that loses its data under load.
// fault=503: every 20th request answers 503 (5 %).
// fault=queue20: one request at a time, 20 ms each: a capacity of exactly
// 50 requests per second, whatever the CPU.
// fault=hog: every request keeps 16 MiB it has written to, as a leak, so the
// task reaches its memory limit within a second of load and the kernel
// kills it.
const hoard = [];
function serve(req, res) {
  const fault = new URL(req.url, 'http://x').searchParams.get('fault');
  if (fault === 'empty') {
    emptyServed++;
    return answer(res, 200, emptyServed <= 20 ? ANSWER : '');
  }
  if (fault === '503') {
    errorCount++;
    return answer(res, errorCount % 20 === 0 ? 503 : 200, ANSWER);
  }
  if (fault === 'hog') {
    hoard.push(Buffer.alloc(16 << 20, 1));
    return answer(res, 200, ANSWER);
  }
  if (fault === 'queue20') {
    queue.push(res);
    return drain();
  }
  return answer(res, 200, ANSWER);
}

function drain() {
  if (busy || queue.length === 0) return;
  busy = true;
  const res = queue.shift();
  setTimeout(() => {
    answer(res, 200, ANSWER);
    busy = false;
    drain();
  }, 20);
}

function answer(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer(serve);
server.keepAliveTimeout = 65000;
server.listen(Number(process.env.PORT || 8080), '0.0.0.0');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
