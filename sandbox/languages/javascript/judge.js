'use strict';
// The judge's runtime for JavaScript and TypeScript (installed as /opt/passk/javascript/judge.js): the entry
// point of the judge's process, `node judge.js` in the judge's directory. It holds none of the model's code.
//
// It installs the stub's call (`globalThis.__passk_call`) and a throwing console.assert, loads the tests
// (main.js: the prompt's code before the function to complete, the stub for that function, the tests), and
// reports PASS on descriptor 3 once their top-level code returned. A stub's call sends the arguments to the
// candidate's process (descriptor 4) and returns the value it answers (descriptor 5), rebuilt from data. How
// a call ends the tests instead (report.py): the candidate's process ended or closed its channel (ENDED), the
// function threw (RAISED <class>: <message>, which the tests cannot catch), it returned a value the wire
// cannot carry (ERROR), or it sent anything but one well-formed answer (BROKEN, with FLAG out_of_turn when
// the data came unasked, checked before each call and before PASS).
//
// A failed assertion of the tests is an uncaught exception, as it is in one process: node prints it on the
// judge's stderr and exits with status 1, and PID 1 classifies it with the language's stderr patterns.

const fs = require('fs');
const net = require('net');
const path = require('path');
const wire = require('./wire.js');

const REPORT = 3;
const CALLS = 4;
const REPLIES = 5;

// End the tests with `record` as the report (its last line is the outcome: report.py).
function end(record) {
  try {
    fs.writeSync(REPORT, record);
  } finally {
    process.exit(1);
  }
}

// The reply descriptor's libuv handle: non-blocking only while looking for unasked data, blocking otherwise.
let replies = null;
const probe = Buffer.alloc(1);

// True if the candidate's process wrote anything that no call asked for.
function unasked() {
  replies.setBlocking(false);
  try {
    return fs.readSync(REPLIES, probe, 0, 1, null) > 0;
  } catch (error) {
    if (error.code === 'EAGAIN' || error.code === 'EWOULDBLOCK') return false;
    throw error;
  } finally {
    replies.setBlocking(true);
  }
}

function cannotCompare(name, type) {
  end(`ERROR ${name}() returned a value of type ${type}, which passk cannot compare`);
}

// The stubs' call: `name` with the arguments as the tests passed them.
function call(name, args) {
  if (unasked()) end(`FLAG out_of_turn\nBROKEN ${name}(): the program wrote on its channel before the call`);
  const w = new wire.Writer();
  w.tag('C');
  w.string(name);
  w.u32(args.length);
  for (let i = 0; i < args.length; i++) {
    try {
      wire.encodeValue(w, args[i], 1);
    } catch (error) {
      if (!(error instanceof wire.Unsendable)) throw error;
      end(`ERROR the tests pass ${name}() a value of type ${error.type}, which passk cannot send`);
    }
  }
  if (!wire.send(CALLS, w.done())) end('ENDED');
  let reply;
  try {
    reply = wire.receive(REPLIES);
  } catch (error) {
    if (error instanceof wire.Malformed) end(`BROKEN ${name}(): ${error.message}`);
    throw error;
  }
  if (reply === null) end('ENDED');
  try {
    const r = new wire.Reader(reply);
    const kind = r.letter();
    if (kind === 'E') {
      const type = r.string();
      const message = r.string();
      r.end();
      end(`RAISED ${type}: ${message}`);
    }
    if (kind === 'U') {
      const type = r.string();
      r.end();
      cannotCompare(name, type);
    }
    if (kind !== 'R') throw new wire.Malformed('not an answer');
    const value = wire.decodeValue(r, 0);
    r.end();
    return value;
  } catch (error) {
    if (error instanceof wire.Unsendable) cannotCompare(name, error.type);
    if (error instanceof wire.Malformed) end(`BROKEN ${name}(): ${error.message}`);
    throw error;
  }
}

// After the tests returned: the only way to a pass.
function pass() {
  if (unasked()) end('FLAG out_of_turn\nBROKEN the program wrote on its channel after its last answer');
  fs.writeSync(REPORT, 'PASS');
  process.exit(0);
}

try {
  replies = new net.Socket({ fd: REPLIES, readable: false, writable: false, allowHalfOpen: true })._handle;
  if (!replies || typeof replies.setBlocking !== 'function') throw new Error('descriptor 5 is not a pipe');
  Object.defineProperty(globalThis, '__passk_call', {
    value: (name, args) => call(name, Array.prototype.slice.call(args)),
    writable: false, configurable: false, enumerable: false,
  });
  wire.installAssert();
} catch (error) {
  end(`SETUP the judge's runtime could not start: ${error && error.message}`);
}
require(path.join(process.cwd(), 'main.js'));
pass();
