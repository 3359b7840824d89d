'use strict';
// passk's server in the candidate's process (installed as /opt/passk/javascript/server.js). The candidate's
// program is the original program's text up to the tests (the prompt and the model's completion), followed by
// one statement that passk adds:
//
//     ;require("/opt/passk/javascript/server.js").serve("name", name);
//
// so the function is served exactly where the tests would have started running in one process, after every
// top-level statement of the model's code. The server reads calls on descriptor 3, calls the function with
// the arguments rebuilt from data, and answers on descriptor 4: the value it returned ('R'), or what it threw
// ('E' <class> <message>). When the judge closes its end, serve() returns and the program runs on to its end.
//
// The server is the candidate's own: the model's code may change anything in this process, and so anything
// the server sends. The judge trusts none of it (judge.js, values.py).

const wire = require('./wire.js');

const CALLS = 3;
const REPLIES = 4;
const { apply } = Reflect;
const { hasOwn } = Object;

// The class and message of what the function threw (an Error's name, else the thrown value's type).
function describe(thrown) {
  try {
    if (thrown !== null && typeof thrown === 'object') {
      const name = typeof thrown.name === 'string' && thrown.name ? thrown.name : 'Object';
      const message = 'message' in thrown ? String(thrown.message) : String(thrown);
      return [name, message];
    }
    return [typeof thrown, String(thrown)];
  } catch (error) {
    return ['Object', ''];
  }
}

function answer(fn, args) {
  const w = new wire.Writer();
  let result;
  try {
    result = apply(fn, undefined, args);
    const value = wire.encode(result, 0);
    w.tag('R');
    w.raw(value);
  } catch (thrown) {
    const [type, message] = describe(thrown);
    const e = new wire.Writer();
    e.tag('E');
    e.string(type);
    e.string(message);
    return e.done();
  }
  return w.done();
}

let serving = false;

// Serve `fn` as `name` until the judge closes its end.
function serve(name, fn) {
  if (serving) return;
  serving = true;
  wire.installAssert();
  const functions = { __proto__: null, [name]: fn };
  for (;;) {
    let message;
    try {
      message = wire.receive(CALLS);
    } catch (error) {
      if (error instanceof wire.Malformed) process.exit(1);
      throw error;
    }
    if (message === null) return;
    let reply;
    try {
      const r = new wire.Reader(message);
      if (r.letter() !== 'C') throw new wire.Malformed('not a call');
      const called = r.string();
      const args = [];
      for (let n = r.u32(), i = 0; i < n; i++) args.push(wire.decodeValue(r, 1));
      r.end();
      if (!hasOwn(functions, called)) throw new wire.Malformed(`a call of ${called}, which is not served`);
      reply = answer(functions[called], args);
    } catch (error) {
      // Only the judge writes calls: a call it did not mean is passk's own failure.
      if (error instanceof wire.Malformed) process.exit(1);
      throw error;
    }
    if (!wire.send(REPLIES, reply)) return;
  }
}

module.exports = { serve };
