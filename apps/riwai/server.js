// Riwai: seed study 000's Taewa loop served through Express, so that the
// only difference from Taewa is the framework's routing and middleware cost.
'use strict';
const express = require('express');

const PREFIX = 'The result of this run is :  ';
const ANSWER_LENGTH = 44;
// A bound on n keeps one request from pinning a core for minutes; the
// study's heaviest difficulty is 80000.
const MAX_N = 10000000;

function work(n) {
  let result = 0;
  for (let i = 0; i < n; i++) result += Math.random() * Math.random();
  return (PREFIX + result).slice(0, ANSWER_LENGTH);
}

// iterations returns n from the query (missing or empty means 0, as in
// Taewa) or throws a message for the client when n is not a whole number
// in range.
function iterations(raw) {
  if (raw === undefined || raw === '') return 0;
  if (typeof raw !== 'string' || !/^[0-9]+$/.test(raw) || Number(raw) > MAX_N) {
    throw new Error(`riwai: query parameter n must be a whole number from 0 to ${MAX_N}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function createApp() {
  const app = express();
  // no ETag hashing or X-Powered-By: the answer differs every time and
  // the header is noise on the wire
  app.set('etag', false);
  app.disable('x-powered-by');
  app.get('/', (req, res) => {
    let n;
    try {
      n = iterations(req.query.n);
    } catch (e) {
      res.status(400).type('text/plain').send(e.message + '\n');
      return;
    }
    res.type('text/plain').send(work(n));
  });
  return app;
}

if (require.main === module) {
  const port = Number(process.env.PORT || 8080);
  const server = createApp().listen(port, process.env.HOST || '0.0.0.0', () => console.log(`riwai listening on ${port}`));
  server.keepAliveTimeout = 65000;
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

module.exports = { createApp, work, iterations, ANSWER_LENGTH, MAX_N };
