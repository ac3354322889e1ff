// Frontier: study 003's web tier on Express. Four routes, each a different
// way to answer: / at once, /remote through a single-worker service that
// serves one request at a time, /alternate through a function pool (the
// study's Lambda), /cached through Redis in front of the remote service.
'use strict';
const http = require('node:http');
const express = require('express');
const settings = require('./settings');
const { call, UpstreamError } = require('./upstream');
const { Cache } = require('./cache');

const HELLO = 'hello from frontier';

// wrap turns a rejected handler into an answer: an UpstreamError's status
// and message, or a 500 for anything else; never an empty 200.
function wrap(fn) {
  return (req, res) => {
    fn(req, res).catch((e) => {
      const status = e instanceof UpstreamError ? e.status : 500;
      if (!(e instanceof UpstreamError)) console.error(`frontier: ${req.method} ${req.path}: ${e.stack || e}`);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.status(status).type('text/plain').send(`${e instanceof UpstreamError ? e.message : `frontier: ${e.message}`}\n`);
    });
  };
}

// ok returns an upstream's 2xx answer, and turns anything else into an
// error naming the upstream: a throttle stays a 429, an unavailable
// upstream a 503, any other status a 502.
function ok(name, answer) {
  if (answer.status >= 200 && answer.status < 300) return answer;
  if (answer.status === 429) {
    throw new UpstreamError(429, `${name}: the function pool throttled the invocation (its concurrency limit is reached)`);
  }
  if (answer.status === 503) throw new UpstreamError(503, `${name}: the upstream is unavailable (503)`);
  throw new UpstreamError(502, `${name}: the upstream answered ${answer.status}`);
}

function relay(res, answer) {
  res.status(answer.status).type(answer.type).send(answer.body);
}

// createApp builds the web tier on the given settings (settings.read) and
// cache (a Cache, connected by the caller).
function createApp(s, cache) {
  // /remote opens a connection per request: the remote service closes each
  // one after its answer, and a kept-alive connection would have nothing
  // to offer it. The pool keeps its connections, as an SDK's client does.
  const remoteAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const poolAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity, timeout: 60000 });
  const remote = () => call(s.remote, { name: 'remote', agent: remoteAgent, timeoutMs: s.upstreamTimeoutMs });
  const invoke = () => call(s.pool, { name: 'alternate', method: 'POST', path: '/invoke', agent: poolAgent, timeoutMs: s.upstreamTimeoutMs });
  const poolCall = (method, path) => call(s.pool, { name: 'pool', method, path, agent: poolAgent, timeoutMs: s.upstreamTimeoutMs });

  const app = express();
  app.set('etag', false);
  app.disable('x-powered-by');
  // Which instance answered: behind the entry, a client can see the spread.
  app.use((req, res, next) => {
    res.set('X-Served-By', `${req.socket.localAddress}:${req.socket.localPort}`);
    next();
  });

  app.get('/', (req, res) => {
    res.type('text/plain').send(HELLO);
  });

  app.get('/remote', wrap(async (req, res) => relay(res, ok('remote', await remote()))));

  app.get('/alternate', wrap(async (req, res) => relay(res, ok('alternate', await invoke()))));

  app.get('/cached', wrap(async (req, res) => {
    const key = cache.key();
    const value = await cache.lookup(key);
    if (value !== null) {
      res.set('X-Cache', 'hit').type('application/json').send(value);
      return;
    }
    const answer = ok('cached', await remote());
    const body = answer.body.toString();
    await cache.store(key, body);
    res.set('X-Cache', 'miss').type(answer.type).send(body);
  }));

  // What a test or a report reads after a run: the cache's counters and
  // the pool's gauge.
  app.get('/stats', wrap(async (req, res) => {
    const gauge = await poolCall('GET', '/gauge');
    if (gauge.status !== 200) throw new UpstreamError(502, `pool: /gauge answered ${gauge.status}`);
    res.json({ cache: await cache.stats(), pool: JSON.parse(gauge.body) });
  }));

  // Empties the cache and its counters, and resets the pool's counts and
  // peaks: a fresh start for the next run.
  app.post('/flush', wrap(async (req, res) => {
    await cache.flush();
    const gauge = await poolCall('POST', '/gauge/reset');
    if (gauge.status !== 200) throw new UpstreamError(502, `pool: /gauge/reset answered ${gauge.status}`);
    res.json({ flushed: true, cache: await cache.stats(), pool: JSON.parse(gauge.body) });
  }));
  app.all('/flush', (req, res) => {
    res.status(405).set('Allow', 'POST').type('text/plain').send('frontier: the flush is POST /flush\n');
  });

  return app;
}

// listen starts the server with the study's entry in front of it modelled:
// a connection left idle for the idle timeout is closed, as the study's ELB
// closed one idle for 60 s (Node advertises the timeout in its Keep-Alive
// header and closes one second later, a margin against clients racing it).
// The headers timeout must outlast it, or Node would cut a kept-alive
// connection whose next request starts late.
function listen(app, s) {
  const server = app.listen(s.port, s.host);
  server.keepAliveTimeout = s.idleTimeoutMs;
  server.headersTimeout = s.idleTimeoutMs + 1000;
  return server;
}

function main() {
  let s;
  try {
    s = settings.read();
  } catch (e) {
    if (!(e instanceof settings.SettingError)) throw e;
    console.error(`frontier: ${e.message}`);
    process.exit(2);
  }
  const cache = new Cache(s.redis, { keys: s.cacheKeys, ttl: s.cacheTTL });
  cache.connect();
  const server = listen(createApp(s, cache), s);
  server.on('listening', () => {
    console.log(`frontier listening on ${server.address().port}: remote ${s.remote.host}:${s.remote.port}, pool ${s.pool.host}:${s.pool.port}, ` +
      `redis ${s.redis.host}:${s.redis.port} (${s.cacheKeys} keys, TTL ${s.cacheTTL} s), idle timeout ${s.idleTimeoutMs / 1000} s, upstream timeout ${s.upstreamTimeoutMs / 1000} s`);
  });
  const stop = () => server.close(() => cache.close().finally(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) main();

module.exports = { createApp, listen, HELLO };
