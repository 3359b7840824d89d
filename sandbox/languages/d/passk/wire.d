/**
 * passk's value wire in D (the rule and the reference codec: sandbox/runtime/values.py).
 *
 * Values are encoded and rebuilt by their static type: the judge rebuilds an answer as the type the prompt's
 * signature returns, the candidate's server the arguments as the types it takes. Any other tag, a truncated value
 * or trailing bytes is Malformed. The types MultiPL-E's D prompts use: bool, the integer types, float, double,
 * char, string, arrays, associative arrays, Nullable!T and Tuple!(...). Another type fails to compile.
 */
module passk.wire;

import core.stdc.errno : EINTR, errno;
import core.sys.posix.signal : SIG_IGN, SIGPIPE, signal;
import core.sys.posix.unistd : read, write;
import std.traits : isAssociativeArray, isDynamicArray, isInstanceOf, isStaticArray, KeyType, Unqual, ValueType;
import std.typecons : isTuple, Nullable;

enum uint MAX_MESSAGE = 1u << 30;

/// Bytes that are not a well-formed value or message.
class Malformed : Exception {
    this(string message) @safe pure nothrow { super(message); }
}

struct Writer {
    ubyte[] data;

    void put(char tag) { data ~= cast(ubyte) tag; }

    void u32(size_t n) {
        if (n > uint.max) throw new Malformed("a length beyond 32 bits");
        foreach_reverse (shift; [0, 8, 16, 24]) data ~= cast(ubyte)(n >> shift);
    }

    void big(ulong bits, size_t size) {
        foreach_reverse (i; 0 .. size) data ~= cast(ubyte)(bits >> (8 * i));
    }

    void str(const(char)[] text) {
        u32(text.length);
        data ~= cast(const(ubyte)[]) text;
    }
}

struct Reader {
    const(ubyte)[] data;
    size_t at;

    const(ubyte)[] take(size_t size) {
        if (size > data.length - at) throw new Malformed("truncated");
        auto chunk = data[at .. at + size];
        at += size;
        return chunk;
    }

    char tag() { return cast(char) take(1)[0]; }

    char peek() { return at < data.length ? cast(char) data[at] : '\0'; }

    ulong big(size_t size) {
        ulong value;
        foreach (b; take(size)) value = (value << 8) | b;
        return value;
    }

    uint u32() { return cast(uint) big(4); }

    string str() { return cast(string) take(u32()).idup; }

    void expect(char wanted) {
        const got = tag();
        if (got != wanted) throw new Malformed("expected tag '" ~ wanted ~ "', got another");
    }

    void finish() {
        if (at != data.length) throw new Malformed("trailing bytes");
    }
}

private template integerTag(T) {
    static if (is(T == byte)) enum integerTag = 'b';
    else static if (is(T == short)) enum integerTag = 'h';
    else static if (is(T == int)) enum integerTag = 'i';
    else static if (is(T == long)) enum integerTag = 'l';
    else static if (is(T == ubyte)) enum integerTag = 'B';
    else static if (is(T == ushort)) enum integerTag = 'H';
    else static if (is(T == uint)) enum integerTag = 'I';
    else static if (is(T == ulong)) enum integerTag = 'L';
    else enum integerTag = '\0';
}

private enum isString(T) = is(T == string) || is(T == const(char)[]) || is(T == char[]);

void encode(V)(ref Writer w, auto ref V value) {
    alias T = Unqual!V;
    static if (is(T == bool)) {
        w.put(value ? 'T' : 'F');
    } else static if (integerTag!T != '\0') {
        w.put(integerTag!T);
        w.big(cast(ulong) value, T.sizeof);
    } else static if (is(T == float)) {
        w.put('f');
        float copy = value;
        w.big(*cast(uint*) &copy, 4);
    } else static if (is(T == double)) {
        w.put('d');
        double copy = value;
        w.big(*cast(ulong*) &copy, 8);
    } else static if (is(T == char)) {
        w.put('c');
        w.u32(cast(ubyte) value);
    } else static if (isString!T) {
        w.put('s');
        w.str(value);
    } else static if (isDynamicArray!T || isStaticArray!T) {
        w.put('A');
        w.u32(value.length);
        foreach (ref item; value) encode(w, item);
    } else static if (isAssociativeArray!T) {
        w.put('M');
        w.u32(value.length);
        foreach (key, ref item; value) {
            encode(w, key);
            encode(w, item);
        }
    } else static if (isInstanceOf!(Nullable, T)) {
        if (value.isNull) {
            w.put('N');
        } else {
            w.put('Y');
            encode(w, value.get);
        }
    } else static if (isTuple!T) {
        w.put('P');
        w.u32(T.Types.length);
        foreach (i, _; T.Types) encode(w, value[i]);
    } else {
        static assert(false, "passk's wire does not carry values of type " ~ T.stringof);
    }
}

T decode(T)(ref Reader r) {
    static if (is(T == bool)) {
        const tag = r.tag();
        if (tag == 'T') return true;
        if (tag == 'F') return false;
        throw new Malformed("expected a bool");
    } else static if (integerTag!T != '\0') {
        r.expect(integerTag!T);
        return cast(T) r.big(T.sizeof);
    } else static if (is(T == float)) {
        r.expect('f');
        uint bits = r.u32();
        return *cast(float*) &bits;
    } else static if (is(T == double)) {
        r.expect('d');
        ulong bits = r.big(8);
        return *cast(double*) &bits;
    } else static if (is(T == char)) {
        r.expect('c');
        const code = r.u32();
        if (code > 0xFF) throw new Malformed("a char beyond one byte");
        return cast(char) code;
    } else static if (isString!T) {
        r.expect('s');
        return cast(T) r.str();
    } else static if (isDynamicArray!T) {
        alias E = Unqual!(typeof(T.init[0]));
        r.expect('A');
        const n = r.u32();
        E[] items;  // grows with the values that arrived, never with the length claimed
        foreach (_; 0 .. n) items ~= decode!E(r);
        return cast(T) items;
    } else static if (isAssociativeArray!T) {
        alias K = Unqual!(KeyType!T);
        alias E = Unqual!(ValueType!T);
        r.expect('M');
        const n = r.u32();
        E[K] map;
        foreach (_; 0 .. n) {
            auto key = decode!K(r);
            if (key in map) throw new Malformed("a map with a key twice");
            map[key] = decode!E(r);
        }
        return cast(T) map;
    } else static if (isInstanceOf!(Nullable, T)) {
        alias E = typeof(T.init.get());
        const tag = r.tag();
        if (tag == 'N') return T.init;
        if (tag != 'Y') throw new Malformed("expected an optional");
        return T(decode!(Unqual!E)(r));
    } else static if (isTuple!T) {
        r.expect('P');
        if (r.u32() != T.Types.length) throw new Malformed("a tuple of another length");
        T value;
        foreach (i, E; T.Types) value[i] = decode!(Unqual!E)(r);
        return value;
    } else {
        static assert(false, "passk's wire does not carry values of type " ~ T.stringof);
    }
}

/// False when the other side is gone (EPIPE: SIGPIPE is ignored by both sides, see ignoreSigpipe).
bool writeAll(int fd, const(ubyte)[] data) nothrow @nogc {
    while (data.length) {
        const n = write(fd, data.ptr, data.length);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data = data[n .. $];
    }
    return true;
}

/// A write to a pipe whose reader is gone fails with EPIPE instead of killing the writer: the judge then
/// reports that the candidate ended, and the server simply stops.
void ignoreSigpipe() nothrow @nogc { signal(SIGPIPE, SIG_IGN); }

bool send(int fd, const(ubyte)[] message) {
    Writer header;
    header.u32(message.length);
    return writeAll(fd, header.data ~ message);
}

/// One framed message; false on a clean end of input before its first byte; Malformed on a cut one. The
/// buffer grows with the bytes that arrived, never with the length the header claims.
bool receive(int fd, out ubyte[] message) {
    ubyte[4] header;
    size_t got;
    while (got < 4) {
        const n = read(fd, header.ptr + got, 4 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (got == 0) return false;
            throw new Malformed("a message cut short");
        }
        got += n;
    }
    const size = (uint(header[0]) << 24) | (uint(header[1]) << 16) | (uint(header[2]) << 8) | header[3];
    if (size > MAX_MESSAGE) throw new Malformed("a message beyond the size limit");
    ubyte[65536] chunk;
    while (message.length < size) {
        const want = size - message.length < chunk.length ? size - message.length : chunk.length;
        const n = read(fd, chunk.ptr, want);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw new Malformed("a message cut short");
        message ~= chunk[0 .. n];
    }
    return true;
}
