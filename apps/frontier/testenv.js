// What frontier's tests run against, all real and on 127.0.0.1: Debian's
// redis-server, the remote service and the function pool as their own
// Python processes, and the web tier in the test's process.
'use strict';
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const settings = require('./settings');
const { createApp, listen } = require('./server');
const { Cache } = require('./cache');

const PYTHON = process.env.PYTHON || 'python3';

// freePort asks the kernel for a port nothing listens on.
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function stopper(child) {
  return () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

// startRedis runs redis-server without persistence on a free port.
async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--protected-mode', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const spawned = new Promise((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`redis-server: ${e.message} (Debian's redis-server: ./justw tools installs it)`)));
    child.once('spawn', resolve);
  });
  await spawned;
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited ${child.exitCode}: ${out}`);
    if (await answers(port)) return { addr: `127.0.0.1:${port}`, port, stop: stopper(child) };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not answer PING on ${port} in 5 s: ${out}`);
}

function answers(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('error', () => resolve(false));
    c.once('connect', () => c.write('PING\r\n'));
    c.once('data', (d) => {
      c.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
  });
}

// startService runs service/<script> (remote.py or pool.py) on a free port
// with env added, and resolves when it says where it listens.
function startService(script, env = {}) {
  const child = spawn(PYTHON, [path.join(__dirname, 'service', script)], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', PYTHONDONTWRITEBYTECODE: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (d) => { out += d; });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}: ${out}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = / listening on ([0-9]+):/.exec(out);
      if (m) resolve({ addr: `127.0.0.1:${m[1]}`, port: Number(m[1]), stop: stopper(child) });
    });
  });
}

// startWeb runs the web tier on a free port with the given environment
// (REMOTE_ADDR, POOL_ADDR, REDIS_ADDR and any other setting).
async function startWeb(env) {
  const s = settings.read({ HOST: '127.0.0.1', PORT: '0', ...env });
  const cache = new Cache(s.redis, { keys: s.cacheKeys, ttl: s.cacheTTL });
  cache.connect();
  const server = listen(createApp(s, cache), s);
  await new Promise((r) => server.once('listening', r));
  // the cache is ready when Redis answers; an unreachable one stays not ready
  for (let i = 0; i < 40 && !cache.client.isReady; i++) await new Promise((r) => setTimeout(r, 50));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    server,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await cache.close().catch(() => {});
    },
  };
}

module.exports = { freePort, startRedis, startService, startWeb };
