'use strict';
// The rules both apps of study 004 share: how an id, a body and num are
// read, and the messages a bad one gets. apps/books-kotlin's
// BooksController.kt and CpuController.kt hold the same rules; the
// integration test test/integration/books_test.go sends both the same table.

const MIN_YEAR = -9999;
const MAX_YEAR = 9999;
const MAX_ID = 2147483647; // PostgreSQL's integer
const MAX_NUM = 10;

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// parseId: a decimal integer that fits the id column.
function parseId(s) {
  const n = /^[0-9]{1,10}$/.test(s) ? Number(s) : -1;
  if (n < 0 || n > MAX_ID) {
    throw new ApiError(400, `id must be an integer between 0 and ${MAX_ID}, got ${JSON.stringify(s)}`);
  }
  return n;
}

// parseFields reads a request body (raw text, whatever its Content-Type).
// partial (PATCH) lets fields be absent but needs at least one.
function parseFields(raw, partial) {
  let body;
  try {
    if (typeof raw !== 'string' || raw === '') throw new Error('empty');
    body = JSON.parse(raw);
  } catch (e) {
    throw new ApiError(400, 'request body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, 'request body must be a JSON object');
  }
  const has = (name) => Object.prototype.hasOwnProperty.call(body, name);
  // title is required on create; author and year may be left out (null),
  // as the study's load creates books with a title only
  const text = (name, required) => {
    if (!has(name)) {
      if (required && !partial) throw new ApiError(400, `missing required field "${name}"`);
      return undefined;
    }
    const v = body[name];
    if (typeof v !== 'string' || v.trim() === '') {
      throw new ApiError(400, `field "${name}" must be a non-empty string`);
    }
    return v;
  };
  const fields = {};
  const title = text('title', true);
  if (title !== undefined) fields.title = title;
  const author = text('author', false);
  if (author !== undefined) fields.author = author;
  if (has('year')) {
    const v = body.year;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < MIN_YEAR || v > MAX_YEAR) {
      throw new ApiError(400, `field "year" must be an integer between ${MIN_YEAR} and ${MAX_YEAR}`);
    }
    fields.year = v;
  }
  if (partial && Object.keys(fields).length === 0) {
    throw new ApiError(400, 'request body names no field to update (title, author, year)');
  }
  return fields;
}

function parseNum(s) {
  if (s === undefined) {
    throw new ApiError(400, `query parameter "num" is required (an integer between 0 and ${MAX_NUM})`);
  }
  const n = typeof s === 'string' && /^[0-9]{1,2}$/.test(s) ? Number(s) : -1;
  if (n < 0 || n > MAX_NUM) {
    throw new ApiError(400, `query parameter "num" must be an integer between 0 and ${MAX_NUM}, got ${JSON.stringify(String(s))}`);
  }
  return n;
}

// cpuIntensive: the study's loop, sum of atan(i) * tan(i) for i in
// [0, num^7). V8's Math.atan and Math.tan are fdlibm, as Java's StrictMath
// is, so books-kotlin computes the same double. The JSON is written by hand
// so both apps print the result with the same six decimals.
function cpuIntensive(num) {
  const iterations = num ** 7;
  let result = 0;
  for (let i = 0; i < iterations; i++) {
    result += Math.atan(i) * Math.tan(i);
  }
  return `{"num":${num},"iterations":${iterations},"result":${result.toFixed(6)}}`;
}

// toJson: the book as both apps answer it, fields in this order.
function toJson(b) {
  return { id: b.id, title: b.title, author: b.author, year: b.year };
}

module.exports = { ApiError, parseId, parseFields, parseNum, cpuIntensive, toJson, MAX_ID, MAX_NUM };
