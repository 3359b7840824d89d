/**
 * The candidate's side of passk's wire: it answers the judge's calls with the model's function.
 *
 * The candidate's program is the model's module (the prompt and the completion, as written) and a module of
 * passk's whose main calls `serve` with the function, taken at the prompt's signature.
 */
module passk.server;

import std.traits : Parameters, ReturnType, staticMap, Unqual;
import std.typecons : Tuple;
import passk.wire;

enum CALLS = 3, REPLIES = 4;

int serve(F)(string name, F entry) {
    ignoreSigpipe();
    alias Args = staticMap!(Unqual, Parameters!F);
    alias R = ReturnType!F;
    while (true) {
        ubyte[] message;
        try {
            if (!receive(CALLS, message)) return 0;
        } catch (Malformed) {
            return 0;
        }
        auto r = Reader(message);
        Writer w;
        try {
            if (r.tag() != 'C' || r.str() != name) return 1;
            if (r.u32() != Args.length) return 1;
            Tuple!Args args;
            foreach (i, T; Args) args[i] = decode!T(r);
            r.finish();
            try {
                static if (is(R == void)) {
                    entry(args.expand);
                    w.put('R');
                    w.put('n');
                } else {
                    auto result = entry(args.expand);
                    Writer value;
                    encode(value, result);
                    w.put('R');
                    w.data ~= value.data;
                }
            } catch (Throwable t) {
                w = Writer();
                w.put('E');
                w.str(typeid(t).name);
                w.str(t.msg);
            }
        } catch (Malformed) {
            return 1;
        }
        if (!send(REPLIES, w.data)) return 0;
    }
}
