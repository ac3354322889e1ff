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

// A bound on n keeps one request from pinning a core for minutes; the
// study's heaviest difficulty is 80000.
const MAX_N = 10000000;

// iterations returns n from the query (missing or empty means 0) or throws
// a message for the client. A typo such as n=2OOOO must not be served as
// zero iterations: the step would measure a lighter difficulty than the
// spec declares and still look valid.
function iterations(url) {
  const values = new URL(url, 'http://taewa').searchParams.getAll('n');
  if (values.length === 0 || (values.length === 1 && values[0] === '')) return 0;
  const raw = values.length === 1 ? values[0] : values;
  if (typeof raw !== 'string' || !/^[0-9]+$/.test(raw) || Number(raw) > MAX_N) {
    throw new Error(`taewa: query parameter n must be a whole number from 0 to ${MAX_N}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

// At most this many bad requests a second are logged one by one; the rest
// are counted in the next summary line, so a flood of bad requests cannot
// turn the log into the bottleneck being measured.
const ERROR_LINES_PER_SECOND = 10;

// activityLog writes one summary line a second in which requests arrived
// (stdout) and one line per bad request (stderr): what an operator reads
// next to a step's latency, at a cost of a few lines a second. Lines start
// with their time (the shipper takes it as the line's time even when it
// ships the line later) and summaries are numbered, so a gap is visible.
function activityLog(out, err, now = () => new Date()) {
  let requests = 0;
  let bad = 0;
  let logged = 0;
  let summaries = 0;
  const stamp = () => now().toISOString();
  return {
    request() { requests++; },
    badRequest(url, message) {
      bad++;
      if (logged++ < ERROR_LINES_PER_SECOND) err(`${stamp()} taewa: error: 400 for ${url}: ${message}`);
    },
    flush() {
      if (requests > 0) {
        const suppressed = Math.max(0, logged - ERROR_LINES_PER_SECOND);
        summaries++;
        out(`${stamp()} taewa: summary #${summaries}: ${requests} requests in the last second, ${bad} bad` + (suppressed > 0 ? ` (${suppressed} not logged)` : ''));
      }
      requests = bad = logged = 0;
    },
  };
}

function createServer(log = activityLog(() => {}, () => {})) {
  return http.createServer((req, res) => {
    let body;
    let status = 200;
    log.request();
    try {
      body = work(iterations(req.url));
    } catch (e) {
      status = 400;
      body = e.message + '\n';
      log.badRequest(req.url, e.message);
    }
    res.writeHead(status, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
}

if (require.main === module) {
  const port = Number(process.env.PORT || 8080);
  const log = activityLog(console.log, console.error);
  setInterval(log.flush, 1000).unref();
  const server = createServer(log);
  server.keepAliveTimeout = 65000;
  server.listen(port, process.env.HOST || '0.0.0.0', () => console.log(`taewa listening on ${port}`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

module.exports = { createServer, activityLog, work, iterations, ANSWER_LENGTH, MAX_N, ERROR_LINES_PER_SECOND };
