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
// cannot carry (ERROR), or it sent anything but one well-formed answer (BROKEN). Data the candidate wrote
// unasked is looked for before each call, before PASS (there it is BROKEN), and as failing tests end (FLAG
// out_of_turn).
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

// Whether the judge wrote its outcome (end() or pass()); a judge that dies of its tests' uncaught exception
// writes none, and PID 1 reads its stderr.
let reported = false;

// End the tests with `record` as the report (its last line is the outcome: report.py).
function end(record) {
  reported = true;
  try {
    fs.writeSync(REPORT, (surplus() ? 'FLAG out_of_turn\n' : '') + record);
  } finally {
    process.exit(1);
  }
}

// The reply descriptor's libuv handle: non-blocking only while looking for unasked data, blocking otherwise.
let replies = null;
const probe = Buffer.alloc(1);

// True if the candidate's process wrote anything that no call asked for (one byte of it is consumed).
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

// How long the ending judge waits for the candidate's process to end once its calls are closed.
const SURPLUS_WAIT_MS = 100;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

// Unasked data, looked for as failing tests end. A candidate that answers ahead of the calls can have its
// answers arrive before a call, where no check can tell them from a prompt answer; the surplus is then still
// on the channel when the tests end. The calls are closed, so an honest server returns and its process ends
// (end of input on the replies); whatever arrives before that, or within SURPLUS_WAIT_MS, is unasked.
function surplus() {
  if (replies === null) return false;
  try {
    fs.closeSync(CALLS);
  } catch (error) {
    // closed already
  }
  const until = Date.now() + SURPLUS_WAIT_MS;
  try {
    for (;;) {
      replies.setBlocking(false);
      try {
        return fs.readSync(REPLIES, probe, 0, 1, null) > 0;
      } catch (error) {
        if (error.code !== 'EAGAIN' && error.code !== 'EWOULDBLOCK') return false;
      } finally {
        replies.setBlocking(true);
      }
      if (Date.now() >= until) return false;
      Atomics.wait(sleeper, 0, 0, 1);
    }
  } catch (error) {
    return false;
  }
}

function cannotCompare(name, type) {
  end(`ERROR ${name}() returned a value of type ${type}, which passk cannot compare`);
}

// The stubs' call: `name` with the arguments as the tests passed them.
function call(name, args) {
  if (unasked()) end(`BROKEN ${name}(): the program wrote on its channel before the call`);
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
// (Only what is there already: waiting for the candidate's process to end would cost every pass its exit.)
function pass() {
  if (unasked()) end('BROKEN the program wrote on its channel after its last answer');
  reported = true;
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
// The tests failed (an uncaught exception): the flag, if the candidate wrote out of turn, and no outcome.
process.on('exit', () => {
  if (!reported && surplus()) fs.writeSync(REPORT, 'FLAG out_of_turn\n');
});
require(path.join(process.cwd(), 'main.js'));
pass();
