'use strict';
// The value wire (sandbox/runtime/values.py has the rule) in JavaScript: framing on descriptors and the codec.
// Installed in the JavaScript and TypeScript images as /opt/passk/javascript/wire.js; used by the judge
// (judge.js) and by passk's server in the candidate's process (server.js).
//
// JavaScript values are dynamic, so every value crosses with its own type and is rebuilt as exactly that:
//   undefined u, null n, booleans F/T, numbers d (binary64: -0, NaN and the infinities keep), BigInt z,
//   strings s (WTF-8: a lone surrogate crosses as its own 3-byte form), arrays A, plain objects O (own
//   enumerable string keys, in the engine's key order), Map M and Set S (in iteration order). An object
//   without a prototype (Object.create(null)) crosses as a plain object: its keys and values are all that
//   JSON.stringify and assert.deepEqual, the datasets' comparisons, look at.
// Anything else (functions, symbols, class instances, Dates, typed arrays, boxed primitives, Promises, arrays
// with holes or extra properties, subclasses of Array, Map or Set) cannot be rebuilt faithfully: the whole
// value crosses as X with its constructor's name, and the judge fails the sample as an error. A receiver
// refuses any other tag, and any byte that is not exactly one well-formed value (Malformed).
//
// Only data crosses: the receiver builds fresh values from bytes, never calls anything of the sender's, and
// defines object keys as own data properties (a key "__proto__" is a key, not a prototype).

const fs = require('fs');

const MAX_DEPTH = 100;
const MAX_MESSAGE = 2 ** 30;
const READ_CHUNK = 1 << 20;

// The builtins the codec relies on, taken when it loads: in the candidate's process the model's code runs
// afterwards, and may change globals it is entitled to change without breaking the server.
const { apply } = Reflect;
const { getPrototypeOf, keys: objectKeys, defineProperty, prototype: ObjectPrototype } = Object;
const { hasOwn } = Object;
const { isArray, prototype: ArrayPrototype } = Array;
const MapClass = Map, SetClass = Set;
const { prototype: MapPrototype } = Map;
const { prototype: SetPrototype } = Set;
const mapForEach = MapPrototype.forEach, mapHas = MapPrototype.has, mapSet = MapPrototype.set;
const mapSize = Object.getOwnPropertyDescriptor(MapPrototype, 'size').get;
const setForEach = SetPrototype.forEach, setHas = SetPrototype.has, setAdd = SetPrototype.add;
const setSize = Object.getOwnPropertyDescriptor(SetPrototype, 'size').get;
const bufferFrom = Buffer.from, bufferAlloc = Buffer.allocUnsafe, bufferConcat = Buffer.concat;
const fromCharCode = String.fromCharCode;
const readSync = fs.readSync, writeSync = fs.writeSync;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const decodeUtf8 = strictUtf8.decode.bind(strictUtf8);
const bigintToString = BigInt.prototype.toString;
const scratch = new DataView(new ArrayBuffer(8));

class Malformed extends Error {}
Malformed.prototype.name = 'Malformed';

// A value the wire cannot carry; `type` names it (values.py's X).
class Unsendable extends Error {
  constructor(type) {
    super(`a value of type ${type}`);
    this.type = type;
  }
}
Unsendable.prototype.name = 'Unsendable';

// ---------------------------------------------------------------- bytes out

class Writer {
  constructor() {
    this.buffer = bufferAlloc(256);
    this.at = 0;
  }

  room(size) {
    if (this.at + size <= this.buffer.length) return;
    let length = this.buffer.length * 2;
    while (length < this.at + size) length *= 2;
    const bigger = bufferAlloc(length);
    this.buffer.copy(bigger, 0, 0, this.at);
    this.buffer = bigger;
  }

  byte(value) {
    this.room(1);
    this.buffer[this.at++] = value;
  }

  tag(letter) {
    this.byte(letter.charCodeAt(0));
  }

  u32(value) {
    this.room(4);
    const b = this.buffer;
    b[this.at] = (value >>> 24) & 0xff;
    b[this.at + 1] = (value >>> 16) & 0xff;
    b[this.at + 2] = (value >>> 8) & 0xff;
    b[this.at + 3] = value & 0xff;
    this.at += 4;
  }

  f64(value) {
    scratch.setFloat64(0, value);
    this.room(8);
    for (let i = 0; i < 8; i++) this.buffer[this.at + i] = scratch.getUint8(i);
    this.at += 8;
  }

  raw(bytes) {
    this.room(bytes.length);
    for (let i = 0; i < bytes.length; i++) this.buffer[this.at + i] = bytes[i];
    this.at += bytes.length;
  }

  // <u32 n> <n bytes>
  bytes(bytes) {
    this.u32(bytes.length);
    this.raw(bytes);
  }

  string(text) {
    this.bytes(wtf8(text));
  }

  done() {
    return this.buffer.subarray(0, this.at);
  }
}

// A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// WTF-8: UTF-8 of the string's UTF-16 units, a surrogate pair as its code point, a lone surrogate as its own
// 3-byte form.
function wtf8(text) {
  if (!LONE_SURROGATE.test(text)) return bufferFrom(text, 'utf8');
  const out = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return bufferFrom(out);
}

// Two's complement, big-endian, in values.py's size: (bit length of |v|) // 8 + 1 bytes; none for zero.
function bigintBytes(value) {
  if (value === 0n) return bufferAlloc(0);
  const magnitude = value < 0n ? -value : value;
  const size = Math.floor(apply(bigintToString, magnitude, [2]).length / 8) + 1;
  const bits = value < 0n ? (1n << BigInt(8 * size)) + value : value;
  const hex = apply(bigintToString, bits, [16]).padStart(2 * size, '0');
  return bufferFrom(hex, 'hex');
}

function constructorName(value) {
  try {
    const proto = getPrototypeOf(value);
    const made = proto === null ? undefined : proto.constructor;
    const name = typeof made === 'function' ? made.name : undefined;
    return typeof name === 'string' && name ? name : 'Object';
  } catch (error) {
    return 'Object';
  }
}

// An array whose own enumerable keys are exactly its indices (no holes, no extra properties).
function denseArray(value) {
  const keys = objectKeys(value);
  const n = value.length;
  return keys.length === n && (n === 0 || keys[n - 1] === String(n - 1));
}

function encodeValue(w, value, depth) {
  if (depth > MAX_DEPTH) throw new Unsendable('deeply nested value');
  switch (typeof value) {
    case 'undefined':
      w.tag('u');
      return;
    case 'boolean':
      w.tag(value ? 'T' : 'F');
      return;
    case 'number':
      w.tag('d');
      w.f64(value);
      return;
    case 'bigint':
      w.tag('z');
      w.bytes(bigintBytes(value));
      return;
    case 'string':
      w.tag('s');
      w.string(value);
      return;
    case 'symbol':
      throw new Unsendable('Symbol');
    case 'function':
      throw new Unsendable(constructorName(value));
    default:
      break;
  }
  if (value === null) {
    w.tag('n');
    return;
  }
  const proto = getPrototypeOf(value);
  if (isArray(value)) {
    if (proto !== ArrayPrototype) throw new Unsendable(constructorName(value));
    if (!denseArray(value)) throw new Unsendable('Array with holes or extra properties');
    const n = value.length;
    w.tag('A');
    w.u32(n);
    for (let i = 0; i < n; i++) encodeValue(w, value[i], depth + 1);
  } else if (proto === MapPrototype) {
    w.tag('M');
    w.u32(apply(mapSize, value, []));
    apply(mapForEach, value, [(item, key) => {
      encodeValue(w, key, depth + 1);
      encodeValue(w, item, depth + 1);
    }]);
  } else if (proto === SetPrototype) {
    w.tag('S');
    w.u32(apply(setSize, value, []));
    apply(setForEach, value, [(item) => encodeValue(w, item, depth + 1)]);
  } else if (proto === ObjectPrototype || proto === null) {
    const keys = objectKeys(value);
    w.tag('O');
    w.u32(keys.length);
    for (const key of keys) {
      w.string(key);
      encodeValue(w, value[key], depth + 1);
    }
  } else {
    throw new Unsendable(constructorName(value));
  }
}

// The bytes of one value at `depth` (0: a returned value; 1: a call's argument); a value the wire cannot
// carry anywhere in it makes the whole value X with its type's name.
function encode(value, depth) {
  const w = new Writer();
  try {
    encodeValue(w, value, depth);
  } catch (error) {
    if (!(error instanceof Unsendable)) throw error;
    const x = new Writer();
    x.tag('X');
    x.string(error.type);
    return x.done();
  }
  return w.done();
}

// ---------------------------------------------------------------- bytes in

class Reader {
  constructor(buffer) {
    this.buffer = buffer;
    this.at = 0;
  }

  left() {
    return this.buffer.length - this.at;
  }

  byte() {
    if (this.at >= this.buffer.length) throw new Malformed('truncated');
    return this.buffer[this.at++];
  }

  letter() {
    return fromCharCode(this.byte());
  }

  take(size) {
    if (size > this.left()) throw new Malformed('truncated');
    const chunk = this.buffer.subarray(this.at, this.at + size);
    this.at += size;
    return chunk;
  }

  u32() {
    const b = this.take(4);
    return ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3];
  }

  // A count of items, each at least one byte long.
  count() {
    const n = this.u32();
    if (n > this.left()) throw new Malformed('a count larger than the message');
    return n;
  }

  f64() {
    const b = this.take(8);
    for (let i = 0; i < 8; i++) scratch.setUint8(i, b[i]);
    return scratch.getFloat64(0);
  }

  bytes() {
    return this.take(this.u32());
  }

  string() {
    return unwtf8(this.bytes());
  }

  end() {
    if (this.at !== this.buffer.length) throw new Malformed('trailing bytes');
  }
}

function unwtf8(bytes) {
  try {
    return decodeUtf8(bytes);
  } catch (error) {
    return unwtf8Strict(bytes);
  }
}

// WTF-8 that is not UTF-8 (it holds a lone surrogate): decoded by hand, and refused unless it is exactly what
// wtf8() makes (shortest forms only; a surrogate pair must be one 4-byte sequence, never two 3-byte ones).
function unwtf8Strict(bytes) {
  const units = [];
  const n = bytes.length;
  let previousHigh = false;
  for (let i = 0; i < n;) {
    const b0 = bytes[i];
    let c;
    let size;
    if (b0 < 0x80) {
      c = b0;
      size = 1;
    } else if (b0 >= 0xc2 && b0 <= 0xdf) {
      size = 2;
      c = b0 & 0x1f;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      size = 3;
      c = b0 & 0x0f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      size = 4;
      c = b0 & 0x07;
    } else {
      throw new Malformed('a string that is not WTF-8');
    }
    if (i + size > n) throw new Malformed('a string that is not WTF-8');
    for (let k = 1; k < size; k++) {
      const b = bytes[i + k];
      if ((b & 0xc0) !== 0x80) throw new Malformed('a string that is not WTF-8');
      c = (c << 6) | (b & 0x3f);
    }
    if ((size === 3 && c < 0x800) || (size === 4 && (c < 0x10000 || c > 0x10ffff))) {
      throw new Malformed('a string that is not WTF-8');
    }
    const low = c >= 0xdc00 && c <= 0xdfff;
    if (low && previousHigh) throw new Malformed('a surrogate pair in two 3-byte forms');
    previousHigh = c >= 0xd800 && c <= 0xdbff;
    if (c >= 0x10000) {
      c -= 0x10000;
      units.push(0xd800 + (c >> 10), 0xdc00 + (c & 0x3ff));
    } else {
      units.push(c);
    }
    i += size;
  }
  let text = '';
  for (let i = 0; i < units.length; i += 4096) text += apply(fromCharCode, null, units.slice(i, i + 4096));
  return text;
}

function bigintFrom(bytes) {
  if (bytes.length === 0) return 0n;
  let value = BigInt('0x' + bytes.toString('hex'));
  if (bytes[0] & 0x80) value -= 1n << BigInt(8 * bytes.length);
  if (bigintBytes(value).length !== bytes.length) throw new Malformed('an integer not in its shortest form');
  return value;
}

function decodeValue(r, depth) {
  if (depth > MAX_DEPTH) throw new Malformed('nested too deeply');
  const tag = r.letter();
  switch (tag) {
    case 'n':
      return null;
    case 'u':
      return undefined;
    case 'F':
      return false;
    case 'T':
      return true;
    case 'd':
      return r.f64();
    case 'z':
      return bigintFrom(r.bytes());
    case 's':
      return r.string();
    case 'A': {
      const n = r.count();
      const out = [];
      for (let i = 0; i < n; i++) out.push(decodeValue(r, depth + 1));
      return out;
    }
    case 'O': {
      const n = r.count();
      const out = {};
      const order = [];
      for (let i = 0; i < n; i++) {
        const key = r.string();
        if (hasOwn(out, key)) throw new Malformed('an object with a key twice');
        defineProperty(out, key, { value: decodeValue(r, depth + 1), writable: true, enumerable: true, configurable: true });
        order.push(key);
      }
      const keys = objectKeys(out);
      for (let i = 0; i < n; i++) if (keys[i] !== order[i]) throw new Malformed('object keys out of their order');
      return out;
    }
    case 'M': {
      const n = r.count();
      const out = new MapClass();
      for (let i = 0; i < n; i++) {
        const key = decodeValue(r, depth + 1);
        if (apply(mapHas, out, [key])) throw new Malformed('a map with a key twice');
        apply(mapSet, out, [key, decodeValue(r, depth + 1)]);
      }
      return out;
    }
    case 'S': {
      const n = r.count();
      const out = new SetClass();
      for (let i = 0; i < n; i++) {
        const item = decodeValue(r, depth + 1);
        if (apply(setHas, out, [item])) throw new Malformed('a set with an item twice');
        apply(setAdd, out, [item]);
      }
      return out;
    }
    case 'X':
      throw new Unsendable(r.string());
    default:
      throw new Malformed(`a value of a type JavaScript does not have (tag ${JSON.stringify(tag)})`);
  }
}

// The one value `bytes` holds at `depth`.
function decode(bytes, depth) {
  const r = new Reader(bytes);
  const value = decodeValue(r, depth);
  r.end();
  return value;
}

// ---------------------------------------------------------------- framing on descriptors

function readSome(fd, buffer, offset, length) {
  for (;;) {
    try {
      return readSync(fd, buffer, offset, length, null);
    } catch (error) {
      if (error.code !== 'EINTR' && error.code !== 'EAGAIN') throw error;
    }
  }
}

// One framed message, or null at a clean end of input before its first byte; Malformed if cut short.
function receive(fd) {
  const header = bufferAlloc(4);
  let got = 0;
  while (got < 4) {
    const n = readSome(fd, header, got, 4 - got);
    if (n === 0) {
      if (got === 0) return null;
      throw new Malformed('a message cut short');
    }
    got += n;
  }
  const size = header.readUInt32BE(0);
  if (size > MAX_MESSAGE) throw new Malformed('a message over 1 GiB');
  // Read as it comes (in chunks): a length alone never makes the reader allocate it.
  const chunks = [];
  let left = size;
  while (left > 0) {
    const chunk = bufferAlloc(Math.min(left, READ_CHUNK));
    let filled = 0;
    while (filled < chunk.length) {
      const n = readSome(fd, chunk, filled, chunk.length - filled);
      if (n === 0) throw new Malformed('a message cut short');
      filled += n;
    }
    chunks.push(chunk);
    left -= chunk.length;
  }
  return chunks.length === 1 ? chunks[0] : bufferConcat(chunks, size);
}

// Writes `message` framed; false if the other side is gone (EPIPE: node ignores SIGPIPE).
function send(fd, message) {
  const framed = bufferAlloc(4 + message.length);
  framed.writeUInt32BE(message.length, 0);
  message.copy(framed, 4);
  let at = 0;
  while (at < framed.length) {
    try {
      at += writeSync(fd, framed, at, framed.length - at);
    } catch (error) {
      if (error.code === 'EINTR' || error.code === 'EAGAIN') continue;
      if (error.code === 'EPIPE') return false;
      throw error;
    }
  }
  return true;
}

// console.assert that throws: HumanEval-X's JavaScript tests check with console.assert, which only prints on
// stderr, and the original harness fails a program that writes to stderr; a failed one ends the tests here.
function throwingAssert(value, ...message) {
  if (value) return;
  const failure = new Error('Assertion failed' + (message.length ? ': ' + message.join(' ') : ''));
  failure.name = 'AssertionError';
  throw failure;
}

function installAssert() {
  defineProperty(console, 'assert', { value: throwingAssert, writable: false, configurable: false, enumerable: true });
}

module.exports = {
  MAX_DEPTH, Malformed, Unsendable, Writer, Reader, encode, decode, encodeValue, decodeValue, wtf8, unwtf8,
  receive, send, installAssert,
};
