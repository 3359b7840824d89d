/**
 * The judge's side of passk's wire: the stub's call into the candidate's process, and the tests' runner.
 *
 * The judge is compiled with -unittest from the prompt's code before the function, a stub for the function
 * (its body calls `call`), and the tests' unittest block: none of the model's code. This module replaces
 * druntime's unit-test runner: it runs every unittest block and reports a pass on the report channel only once
 * all of them ran and passed; the tests' own main is never run.
 */
module passk.judge;

import core.runtime : Runtime, UnitTestResult;
import core.stdc.stdio : fflush, stderr, stdout;
import core.stdc.stdlib : _Exit;
import core.sys.posix.poll : poll, pollfd, POLLIN;
import core.sys.posix.unistd : read;
import core.exception : AssertError;
import std.traits : Unqual;
import passk.wire;

enum REPORT = 3, CALLS = 4, REPLIES = 5;

/// The judge's last word on the report channel (report.py), then its exit.
void end(string record) {
    fflush(stdout);
    fflush(stderr);
    writeAll(REPORT, cast(const(ubyte)[]) record);
    _Exit(1);
}

/// Anything waiting on the reply pipe before a call was sent (or before the pass) was sent unasked.
void checkUnasked(string when) {
    pollfd p = pollfd(REPLIES, POLLIN, 0);
    if (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
        ubyte b;
        if (read(REPLIES, &b, 1) == 1) end("BROKEN the candidate's process wrote on its channel " ~ when);
    }
}

R call(R, A...)(string name, auto ref A args) {
    checkUnasked("before a call");
    Writer w;
    w.put('C');
    w.str(name);
    w.u32(A.length);
    foreach (ref arg; args) encode(w, arg);
    if (!send(CALLS, w.data)) end("ENDED");
    ubyte[] reply;
    try {
        if (!receive(REPLIES, reply)) end("ENDED");
        auto r = Reader(reply);
        const kind = r.tag();
        if (kind == 'E') {
            const type = r.str(), message = r.str();
            r.finish();
            end("RAISED " ~ type ~ ": " ~ message);
        }
        if (kind == 'U' || (kind == 'R' && r.peek() == 'X')) {
            if (kind == 'R') r.tag();
            const type = r.str();
            r.finish();
            end("ERROR " ~ name ~ "() returned a value of type " ~ type ~ ", which passk cannot compare");
        }
        if (kind != 'R') throw new Malformed("not an answer");
        static if (is(R == void)) {
            r.expect('n');
            r.finish();
        } else {
            auto value = decode!(Unqual!R)(r);
            r.finish();
            return value;
        }
    } catch (Malformed bad) {
        end("BROKEN " ~ name ~ "(): " ~ bad.msg);
    }
    assert(0);
}

/// Every module's unittest block, in order; the first that throws ends the judge (its report says how).
UnitTestResult runTests() {
    ignoreSigpipe();
    size_t executed;
    foreach (m; ModuleInfo) {
        if (m is null || m.unitTest is null) continue;
        executed++;
        try {
            m.unitTest()();
        } catch (Throwable t) {
            const where = t.file ~ "(" ~ lineText(t.line) ~ "): ";
            const line = typeid(t).name ~ "@" ~ where ~ t.msg;
            fflush(stdout);
            writeAll(2, cast(const(ubyte)[]) (line ~ "\n"));
            end((cast(AssertError) t ? "FAILED " : "ERROR ") ~ line);
        }
    }
    if (executed == 0) end("ERROR the tests hold no unittest block");
    checkUnasked("after its last answer");
    fflush(stdout);
    fflush(stderr);
    writeAll(REPORT, cast(const(ubyte)[]) "PASS");
    _Exit(0);
    assert(0);
}

private string lineText(size_t n) {
    import std.conv : to;
    return n.to!string;
}

shared static this() {
    Runtime.extendedModuleUnitTester = &runTests;
}
