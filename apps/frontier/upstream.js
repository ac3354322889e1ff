// Calls to the web tier's upstreams (the remote service and the function
// pool) over HTTP/1.1, each bounded in time. Whatever goes wrong becomes an
// UpstreamError carrying the status and a short message for the client:
// a broken upstream must never look like an answer.
'use strict';
const http = require('node:http');

class UpstreamError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// call sends one request to target ({host, port}) and resolves with
// {status, type, body} for any answer the upstream gives; it rejects with an
// UpstreamError when there is none (refused, reset, timed out).
function call(target, { name, method = 'GET', path = '/', agent, timeoutMs }) {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const req = http.request({ host: target.host, port: target.port, method, path, agent, headers: { 'content-length': '0' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'] || 'application/octet-stream', body: Buffer.concat(chunks) }));
      res.on('error', (e) => reject(failure(name, target, e, timedOut, timeoutMs)));
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('timed out'));
    }, timeoutMs);
    req.on('error', (e) => reject(failure(name, target, e, timedOut, timeoutMs)));
    req.on('close', () => clearTimeout(timer));
    req.end();
  });
}

function failure(name, target, e, timedOut, timeoutMs) {
  const at = `${target.host}:${target.port}`;
  if (timedOut) return new UpstreamError(504, `${name}: no answer from ${at} within ${timeoutMs / 1000} s`);
  switch (e.code) {
    case 'ECONNREFUSED':
      return new UpstreamError(502, `${name}: connection refused by ${at}`);
    case 'ECONNRESET':
      return new UpstreamError(502, `${name}: ${at} closed the connection before answering`);
    default:
      return new UpstreamError(502, `${name}: ${at}: ${e.code || e.message}`);
  }
}

module.exports = { call, UpstreamError };
