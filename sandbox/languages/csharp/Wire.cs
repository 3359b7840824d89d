// The value wire (sandbox/runtime/values.py has the rule) in C#: values encoded and rebuilt by their declared type,
// for the judge (Judge.cs) and the candidate's server (Server.cs). Compiled into /opt/passk/csharp/passk.dll when
// the image is built.
//
// A value is rebuilt as the type the prompt's signature declares (a System.Type, found by reflection on the stub or
// on the server's generated method), and any other tag is refused (Malformed):
//
//   bool 'T'/'F'; sbyte, short, int, long 'b' 'h' 'i' 'l'; byte, ushort, uint, ulong 'B' 'H' 'I' 'L';
//   BigInteger 'z'; float 'f' and double 'd' (their raw IEEE bits); char 'c' (its UTF-16 unit);
//   string 's' (WTF-8 of its UTF-16 units, a lone surrogate as its own 3-byte form);
//   List<T>, IList<T>, ICollection<T>, IEnumerable<T>, T[] 'A'; HashSet<T>, ISet<T> 'S';
//   Dictionary<K,V>, IDictionary<K,V> 'M' (in the sender's iteration order); Tuple<...>, ValueTuple<...> 'P';
//   null (a reference type's, an empty Nullable<T>'s) 'n', a Nullable<T> that has a value as that value.
//
// A declared object crosses as 'a' with the C# name of its runtime type ("long", "List<object>",
// "Tuple<long,string>"), rebuilt from those names only (never a class the candidate defined); any other runtime
// type crosses as 'X' by name and is never rebuilt. Only this file's code and the framework's run while a value is
// rebuilt.
using System;
using System.Collections;
using System.Collections.Generic;
using System.IO;
using System.Numerics;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;

namespace Passk {

/// <summary>Bytes that are not a well-formed value (or message) of the expected type.</summary>
public sealed class Malformed : Exception {
    public Malformed(string why) : base(why) {}
}

/// <summary>A value of a type the wire cannot carry: met as 'X' while decoding, or found while encoding.</summary>
public sealed class Unsendable : Exception {
    public readonly string Type;
    public Unsendable(string type) : base(type) { Type = type; }
}

public static class Wire {
    public const int MaxDepth = 100;
    public const int MaxMessage = 1 << 30;

    // ------------------------------------------------------------------ bytes

    public sealed class Out {
        readonly MemoryStream data = new MemoryStream();
        public void B(char tag) { data.WriteByte((byte) tag); }
        public void Raw(byte[] bytes) { data.Write(bytes, 0, bytes.Length); }
        public void Big(ulong value, int size) {
            for (int shift = 8 * (size - 1); shift >= 0; shift -= 8) data.WriteByte((byte) (value >> shift));
        }
        public void U32(long n) { Big((ulong) n, 4); }
        public void Bytes(byte[] bytes) { U32(bytes.Length); Raw(bytes); }
        public void String(string text) { Bytes(Wtf8(text)); }
        public byte[] ToArray() { return data.ToArray(); }
    }

    public sealed class In {
        readonly byte[] data;
        int at;
        public In(byte[] data) { this.data = data; }
        public int Left { get { return data.Length - at; } }
        public bool Done { get { return at == data.Length; } }
        public byte[] Take(long size) {
            if (size < 0 || size > Left) throw new Malformed("truncated");
            var chunk = new byte[size];
            Array.Copy(data, at, chunk, 0, size);
            at += (int) size;
            return chunk;
        }
        public char Tag() { return (char) Take(1)[0]; }
        public ulong Big(int size) {
            ulong value = 0;
            foreach (byte b in Take(size)) value = (value << 8) | b;
            return value;
        }
        public long U32() { return (long) Big(4); }
        public byte[] Bytes() { return Take(U32()); }
        public string String() { return FromWtf8(Bytes()); }
        // A count of items, each at least one byte: past the end is Malformed before anything is allocated.
        public int Count() {
            long n = U32();
            if (n > Left) throw new Malformed("a count past the end");
            return (int) n;
        }
    }

    /// <summary>UTF-8 of a string's UTF-16 units, a lone surrogate as its own 3-byte form.</summary>
    public static byte[] Wtf8(string text) {
        var out_ = new MemoryStream(text.Length);
        for (int i = 0; i < text.Length; i++) {
            int c = text[i];
            if (char.IsHighSurrogate(text[i]) && i + 1 < text.Length && char.IsLowSurrogate(text[i + 1])) {
                c = char.ConvertToUtf32(text[i], text[i + 1]);
                i++;
            }
            if (c < 0x80) {
                out_.WriteByte((byte) c);
            } else if (c < 0x800) {
                out_.WriteByte((byte) (0xC0 | c >> 6)); out_.WriteByte((byte) (0x80 | c & 0x3F));
            } else if (c < 0x10000) {
                out_.WriteByte((byte) (0xE0 | c >> 12)); out_.WriteByte((byte) (0x80 | c >> 6 & 0x3F));
                out_.WriteByte((byte) (0x80 | c & 0x3F));
            } else {
                out_.WriteByte((byte) (0xF0 | c >> 18)); out_.WriteByte((byte) (0x80 | c >> 12 & 0x3F));
                out_.WriteByte((byte) (0x80 | c >> 6 & 0x3F)); out_.WriteByte((byte) (0x80 | c & 0x3F));
            }
        }
        return out_.ToArray();
    }

    /// <summary>The string whose WTF-8 is `bytes` (Malformed for anything else, a surrogate pair's two 3-byte
    /// forms too: its WTF-8 is the 4-byte form).</summary>
    public static string FromWtf8(byte[] bytes) {
        var text = new StringBuilder(bytes.Length);
        int i = 0;
        while (i < bytes.Length) {
            int b = bytes[i], size, c;
            if (b < 0x80) { size = 1; c = b; }
            else if (b >= 0xC2 && b < 0xE0) { size = 2; c = b & 0x1F; }
            else if (b >= 0xE0 && b < 0xF0) { size = 3; c = b & 0x0F; }
            else if (b >= 0xF0 && b < 0xF5) { size = 4; c = b & 0x07; }
            else throw new Malformed("a string that is not WTF-8");
            if (i + size > bytes.Length) throw new Malformed("a string that is not WTF-8");
            for (int k = 1; k < size; k++) {
                int more = bytes[i + k];
                if ((more & 0xC0) != 0x80) throw new Malformed("a string that is not WTF-8");
                c = c << 6 | more & 0x3F;
            }
            if ((size == 3 && c < 0x800) || (size == 4 && (c < 0x10000 || c > 0x10FFFF)))
                throw new Malformed("a string that is not WTF-8");
            if (c >= 0x10000) {
                text.Append(char.ConvertFromUtf32(c));
            } else {
                if (c >= 0xDC00 && c < 0xE000 && text.Length > 0 && char.IsHighSurrogate(text[text.Length - 1])
                    && i >= 3 && bytes[i - 3] == 0xED)
                    throw new Malformed("a string that is not WTF-8");
                text.Append((char) c);
            }
            i += size;
        }
        return text.ToString();
    }

    // ------------------------------------------------------------------ types

    static bool Generic(Type t, Type definition) {
        return t.IsGenericType && t.GetGenericTypeDefinition() == definition;
    }

    static bool IsSequence(Type t) {
        return t.IsArray && t.GetArrayRank() == 1 || Generic(t, typeof(List<>)) || Generic(t, typeof(IList<>))
            || Generic(t, typeof(ICollection<>)) || Generic(t, typeof(IEnumerable<>))
            || Generic(t, typeof(IReadOnlyList<>)) || Generic(t, typeof(IReadOnlyCollection<>));
    }

    static bool IsSet(Type t) { return Generic(t, typeof(HashSet<>)) || Generic(t, typeof(ISet<>)); }

    static bool IsMap(Type t) {
        return Generic(t, typeof(Dictionary<,>)) || Generic(t, typeof(IDictionary<,>))
            || Generic(t, typeof(IReadOnlyDictionary<,>));
    }

    static readonly Type[] Tuples = {
        typeof(Tuple<>), typeof(Tuple<,>), typeof(Tuple<,,>), typeof(Tuple<,,,>), typeof(Tuple<,,,,>),
        typeof(Tuple<,,,,,>), typeof(Tuple<,,,,,,>),
        typeof(ValueTuple<>), typeof(ValueTuple<,>), typeof(ValueTuple<,,>), typeof(ValueTuple<,,,>),
        typeof(ValueTuple<,,,,>), typeof(ValueTuple<,,,,,>), typeof(ValueTuple<,,,,,,>),
    };

    static bool IsTuple(Type t) { return t.IsGenericType && Array.IndexOf(Tuples, t.GetGenericTypeDefinition()) >= 0; }

    static readonly Dictionary<Type, string> Simple = new Dictionary<Type, string> {
        {typeof(bool), "bool"}, {typeof(sbyte), "sbyte"}, {typeof(short), "short"}, {typeof(int), "int"},
        {typeof(long), "long"}, {typeof(byte), "byte"}, {typeof(ushort), "ushort"}, {typeof(uint), "uint"},
        {typeof(ulong), "ulong"}, {typeof(float), "float"}, {typeof(double), "double"}, {typeof(char), "char"},
        {typeof(string), "string"}, {typeof(object), "object"}, {typeof(BigInteger), "BigInteger"},
    };

    static readonly Dictionary<string, Type> Definitions = new Dictionary<string, Type> {
        {"List", typeof(List<>)}, {"HashSet", typeof(HashSet<>)}, {"Dictionary", typeof(Dictionary<,>)},
        {"Nullable", typeof(Nullable<>)}, {"Tuple", null}, {"ValueTuple", null},
    };

    /// <summary>The C# name of a type the wire carries ("long", "List<object>", "long[]"), or null.</summary>
    public static string Name(Type t) {
        string name;
        if (Simple.TryGetValue(t, out name)) return name;
        if (t.IsArray) {
            string item = t.GetArrayRank() == 1 ? Name(t.GetElementType()) : null;
            return item == null ? null : item + "[]";
        }
        if (!t.IsGenericType) return null;
        Type definition = t.GetGenericTypeDefinition();
        string head = null;
        foreach (var known in Definitions)
            if (known.Value == definition) head = known.Key;
        if (IsTuple(t)) head = definition.Name.Substring(0, definition.Name.IndexOf('`'));
        if (head == null) return null;
        var names = new List<string>();
        foreach (Type argument in t.GetGenericArguments()) {
            string argumentName = Name(argument);
            if (argumentName == null) return null;
            names.Add(argumentName);
        }
        return head + "<" + string.Join(",", names) + ">";
    }

    /// <summary>The type a dynamic value's name names (Malformed for any other name).</summary>
    public static Type Named(string name) {
        int at = 0;
        Type t = ParseName(name, ref at, 0);
        if (at != name.Length) throw new Malformed("an unknown type name: " + name);
        return t;
    }

    static Type ParseName(string name, ref int at, int depth) {
        if (depth > MaxDepth) throw new Malformed("an unknown type name: " + name);
        int start = at;
        while (at < name.Length && (char.IsLetterOrDigit(name[at]) || name[at] == '_')) at++;
        string head = name.Substring(start, at - start);
        Type t = null;
        if (at < name.Length && name[at] == '<') {
            Type definition;
            if (!Definitions.TryGetValue(head, out definition)) throw new Malformed("an unknown type name: " + name);
            var arguments = new List<Type>();
            do {
                at++;
                arguments.Add(ParseName(name, ref at, depth + 1));
            } while (at < name.Length && name[at] == ',');
            if (at >= name.Length || name[at] != '>') throw new Malformed("an unknown type name: " + name);
            at++;
            if (definition == null) {
                if (arguments.Count > 7) throw new Malformed("an unknown type name: " + name);
                int index = (head == "Tuple" ? 0 : 7) + arguments.Count - 1;
                definition = Tuples[index];
            }
            try {
                t = definition.MakeGenericType(arguments.ToArray());
            } catch (ArgumentException) {
                throw new Malformed("an unknown type name: " + name);
            }
        } else {
            foreach (var known in Simple)
                if (known.Value == head) t = known.Key;
            if (t == null) throw new Malformed("an unknown type name: " + name);
        }
        while (name.IndexOf("[]", at, StringComparison.Ordinal) == at) {
            t = t.MakeArrayType();
            at += 2;
        }
        if (Name(t) != name.Substring(start, at - start)) throw new Malformed("an unknown type name: " + name);
        return t;
    }

    // ------------------------------------------------------------------ encoding

    /// <summary>`value` as the declared type `t` (Unsendable when the wire cannot carry it).</summary>
    public static void Encode(Out out_, Type t, object value, int depth) {
        if (depth > MaxDepth) throw new Unsendable("deeply nested value");
        if (t.IsByRef) t = t.GetElementType();
        if (value == null) {
            if (t.IsValueType && !Generic(t, typeof(Nullable<>))) throw new Unsendable(t.Name);
            out_.B('n');
            return;
        }
        if (Generic(t, typeof(Nullable<>))) t = t.GetGenericArguments()[0];
        if (t == typeof(object)) {
            Type runtime = value.GetType();
            string name = Name(runtime);
            if (name == null || runtime == typeof(object)) throw new Unsendable(runtime.FullName ?? runtime.Name);
            out_.B('a');
            out_.String(name);
            Encode(out_, runtime, value, depth);
            return;
        }
        if (t == typeof(bool)) { out_.B((bool) value ? 'T' : 'F'); return; }
        if (t == typeof(sbyte)) { out_.B('b'); out_.Big((ulong) (sbyte) value, 1); return; }
        if (t == typeof(short)) { out_.B('h'); out_.Big((ulong) (short) value, 2); return; }
        if (t == typeof(int)) { out_.B('i'); out_.Big((ulong) (int) value, 4); return; }
        if (t == typeof(long)) { out_.B('l'); out_.Big((ulong) (long) value, 8); return; }
        if (t == typeof(byte)) { out_.B('B'); out_.Big((byte) value, 1); return; }
        if (t == typeof(ushort)) { out_.B('H'); out_.Big((ushort) value, 2); return; }
        if (t == typeof(uint)) { out_.B('I'); out_.Big((uint) value, 4); return; }
        if (t == typeof(ulong)) { out_.B('L'); out_.Big((ulong) value, 8); return; }
        if (t == typeof(float)) {
            out_.B('f');
            out_.Big((uint) BitConverter.ToInt32(BitConverter.GetBytes((float) value), 0), 4);
            return;
        }
        if (t == typeof(double)) { out_.B('d'); out_.Big((ulong) BitConverter.DoubleToInt64Bits((double) value), 8); return; }
        if (t == typeof(char)) { out_.B('c'); out_.U32((char) value); return; }
        if (t == typeof(string)) { out_.B('s'); out_.String((string) value); return; }
        if (t == typeof(BigInteger)) {
            var big = (BigInteger) value;
            out_.B('z');
            if (big.IsZero) { out_.U32(0); return; }
            byte[] little = big.ToByteArray();  // two's complement, little-endian, shortest
            Array.Reverse(little);
            out_.Bytes(little);
            return;
        }
        if (IsSequence(t) || IsSet(t)) {
            Type item = t.IsArray ? t.GetElementType() : t.GetGenericArguments()[0];
            var items = new List<object>();
            foreach (object each in (IEnumerable) value) items.Add(each);
            out_.B(IsSet(t) ? 'S' : 'A');
            out_.U32(items.Count);
            foreach (object each in items) Encode(out_, item, each, depth + 1);
            return;
        }
        if (IsMap(t)) {
            Type[] kv = t.GetGenericArguments();
            var entries = new List<object>();
            foreach (object each in (IEnumerable) value) entries.Add(each);
            out_.B('M');
            out_.U32(entries.Count);
            Type pair = typeof(KeyValuePair<,>).MakeGenericType(kv);
            foreach (object each in entries) {
                Encode(out_, kv[0], pair.GetProperty("Key").GetValue(each, null), depth + 1);
                Encode(out_, kv[1], pair.GetProperty("Value").GetValue(each, null), depth + 1);
            }
            return;
        }
        if (IsTuple(t)) {
            Type[] items = t.GetGenericArguments();
            Type runtime = value.GetType();
            out_.B('P');
            out_.U32(items.Length);
            for (int i = 0; i < items.Length; i++) {
                string member = "Item" + (i + 1);
                PropertyInfo property = runtime.GetProperty(member);
                object item = property != null ? property.GetValue(value, null) : runtime.GetField(member).GetValue(value);
                Encode(out_, items[i], item, depth + 1);
            }
            return;
        }
        throw new Unsendable(Name(t) ?? t.FullName ?? t.Name);
    }

    public static byte[] Encode(Type t, object value) {
        var out_ = new Out();
        Encode(out_, t, value, 0);
        return out_.ToArray();
    }

    // ------------------------------------------------------------------ decoding

    /// <summary>The value of declared type `t` that the reader holds next (Malformed for any other tag).</summary>
    public static object Decode(In r, Type t, int depth) {
        if (depth > MaxDepth) throw new Malformed("nested too deeply");
        if (t.IsByRef) t = t.GetElementType();
        char tag = r.Tag();
        if (tag == 'X') throw new Unsendable(r.String());
        if (tag == 'n') {
            if (t.IsValueType && !Generic(t, typeof(Nullable<>))) throw new Malformed("null for a " + t.Name);
            return null;
        }
        if (Generic(t, typeof(Nullable<>))) t = t.GetGenericArguments()[0];
        if (t == typeof(object)) {
            if (tag != 'a') throw new Malformed("not a dynamic value");
            Type named = Named(r.String());
            if (named == typeof(object)) throw new Malformed("a dynamic value of type object");
            return Decode(r, named, depth);
        }
        if (t == typeof(bool)) {
            if (tag == 'T') return true;
            if (tag == 'F') return false;
            throw Unexpected(tag, t);
        }
        if (t == typeof(sbyte)) { Want(tag, 'b', t); return (sbyte) r.Big(1); }
        if (t == typeof(short)) { Want(tag, 'h', t); return (short) r.Big(2); }
        if (t == typeof(int)) { Want(tag, 'i', t); return (int) r.Big(4); }
        if (t == typeof(long)) { Want(tag, 'l', t); return (long) r.Big(8); }
        if (t == typeof(byte)) { Want(tag, 'B', t); return (byte) r.Big(1); }
        if (t == typeof(ushort)) { Want(tag, 'H', t); return (ushort) r.Big(2); }
        if (t == typeof(uint)) { Want(tag, 'I', t); return (uint) r.Big(4); }
        if (t == typeof(ulong)) { Want(tag, 'L', t); return r.Big(8); }
        if (t == typeof(float)) {
            Want(tag, 'f', t);
            return BitConverter.ToSingle(BitConverter.GetBytes((uint) r.Big(4)), 0);
        }
        if (t == typeof(double)) { Want(tag, 'd', t); return BitConverter.Int64BitsToDouble((long) r.Big(8)); }
        if (t == typeof(char)) {
            Want(tag, 'c', t);
            long unit = r.U32();
            if (unit > 0xFFFF) throw new Malformed("a character past UTF-16");
            return (char) unit;
        }
        if (t == typeof(string)) { Want(tag, 's', t); return r.String(); }
        if (t == typeof(BigInteger)) {
            Want(tag, 'z', t);
            byte[] bytes = r.Bytes();
            if (bytes.Length == 0) return BigInteger.Zero;
            if (bytes.Length > 1 && (bytes[0] == 0 && bytes[1] < 0x80 || bytes[0] == 0xFF && bytes[1] >= 0x80))
                throw new Malformed("an integer not in its shortest form");
            Array.Reverse(bytes);
            return new BigInteger(bytes);
        }
        if (IsSequence(t)) {
            Want(tag, 'A', t);
            Type item = t.IsArray ? t.GetElementType() : t.GetGenericArguments()[0];
            int n = r.Count();
            var list = (IList) Activator.CreateInstance(typeof(List<>).MakeGenericType(item));
            for (int i = 0; i < n; i++) list.Add(Decode(r, item, depth + 1));
            if (!t.IsArray) return list;
            Array array = Array.CreateInstance(item, n);
            list.CopyTo(array, 0);
            return array;
        }
        if (IsSet(t)) {
            Want(tag, 'S', t);
            Type item = t.GetGenericArguments()[0];
            Type setType = typeof(HashSet<>).MakeGenericType(item);
            object set = Activator.CreateInstance(setType);
            MethodInfo add = setType.GetMethod("Add");
            int n = r.Count();
            for (int i = 0; i < n; i++)
                if (!(bool) add.Invoke(set, new[] {Decode(r, item, depth + 1)})) throw new Malformed("a set with an item twice");
            return set;
        }
        if (IsMap(t)) {
            Want(tag, 'M', t);
            Type[] kv = t.GetGenericArguments();
            var map = (IDictionary) Activator.CreateInstance(typeof(Dictionary<,>).MakeGenericType(kv));
            int n = r.Count();
            for (int i = 0; i < n; i++) {
                object key = Decode(r, kv[0], depth + 1);
                object item = Decode(r, kv[1], depth + 1);
                if (key == null) throw new Malformed("a map with a null key");
                if (map.Contains(key)) throw new Malformed("a map with a key twice");
                map.Add(key, item);
            }
            return map;
        }
        if (IsTuple(t)) {
            Want(tag, 'P', t);
            Type[] items = t.GetGenericArguments();
            if (r.U32() != items.Length) throw new Malformed("a tuple of another size");
            var values = new object[items.Length];
            for (int i = 0; i < items.Length; i++) values[i] = Decode(r, items[i], depth + 1);
            return Activator.CreateInstance(t, values);
        }
        throw new Unsendable(Name(t) ?? t.FullName ?? t.Name);
    }

    static void Want(char tag, char wanted, Type t) {
        if (tag != wanted) throw Unexpected(tag, t);
    }

    static Malformed Unexpected(char tag, Type t) {
        return new Malformed("a value tagged '" + tag + "' for a " + (Name(t) ?? t.Name));
    }

    public static object Decode(Type t, byte[] data) {
        var r = new In(data);
        object value = Decode(r, t, 0);
        if (!r.Done) throw new Malformed("trailing bytes");
        return value;
    }

    // ------------------------------------------------------------------ messages and descriptors

    /// <summary>An inherited descriptor as a stream. Mono's FileStream only takes the handles Mono opened itself,
    /// and passk's processes are not dumpable (/proc/self/fd is not theirs to open): read and write go to libc.</summary>
    public static Stream Descriptor(int fd, FileAccess access) {
        return new FdStream(fd, access);
    }

    [DllImport("libc", SetLastError = true)]
    static extern IntPtr read(int fd, byte[] buffer, UIntPtr count);

    [DllImport("libc", SetLastError = true)]
    static extern IntPtr write(int fd, byte[] buffer, UIntPtr count);

    const int Eintr = 4;

    sealed class FdStream : Stream {
        readonly int fd;
        readonly FileAccess access;
        public FdStream(int fd, FileAccess access) { this.fd = fd; this.access = access; }
        public override bool CanRead { get { return access == FileAccess.Read; } }
        public override bool CanWrite { get { return access == FileAccess.Write; } }
        public override bool CanSeek { get { return false; } }
        public override long Length { get { throw new NotSupportedException(); } }
        public override long Position { get { throw new NotSupportedException(); } set { throw new NotSupportedException(); } }
        public override void Flush() {}
        public override long Seek(long offset, SeekOrigin origin) { throw new NotSupportedException(); }
        public override void SetLength(long value) { throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count) {
            var chunk = offset == 0 ? buffer : new byte[count];
            while (true) {
                long n = (long) read(fd, chunk, (UIntPtr) count);
                if (n < 0 && Marshal.GetLastWin32Error() == Eintr) continue;
                if (n < 0) throw new IOException("read from descriptor " + fd + " failed");
                if (offset != 0) Array.Copy(chunk, 0, buffer, offset, n);
                return (int) n;
            }
        }

        public override void Write(byte[] buffer, int offset, int count) {
            int done = 0;
            while (done < count) {
                var part = new byte[count - done];
                Array.Copy(buffer, offset + done, part, 0, part.Length);
                long n = (long) write(fd, part, (UIntPtr) part.Length);
                if (n < 0 && Marshal.GetLastWin32Error() == Eintr) continue;
                if (n <= 0) throw new IOException("write to descriptor " + fd + " failed");
                done += (int) n;
            }
        }

        protected override void Dispose(bool disposing) {
            if (disposing) close(fd);
            base.Dispose(disposing);
        }
    }

    [DllImport("libc")]
    static extern int close(int fd);

    /// <summary>One framed message, or null at the end of input (Malformed when it ends inside one).</summary>
    public static byte[] Receive(Stream input) {
        byte[] header = ReadFully(input, 4, true);
        if (header == null) return null;
        long size = (long) header[0] << 24 | (long) header[1] << 16 | (long) header[2] << 8 | header[3];
        if (size > MaxMessage) throw new Malformed("a message over " + MaxMessage + " bytes");
        return ReadFully(input, (int) size, false);
    }

    static byte[] ReadFully(Stream input, int size, bool endAllowed) {
        var data = new byte[size];
        int got = 0;
        while (got < size) {
            int n = input.Read(data, got, size - got);
            if (n <= 0) {
                if (got == 0 && endAllowed) return null;
                throw new Malformed("truncated message");
            }
            got += n;
        }
        return data;
    }

    public static void Send(Stream output, byte[] message) {
        var framed = new byte[message.Length + 4];
        framed[0] = (byte) (message.Length >> 24);
        framed[1] = (byte) (message.Length >> 16);
        framed[2] = (byte) (message.Length >> 8);
        framed[3] = (byte) message.Length;
        Array.Copy(message, 0, framed, 4, message.Length);
        output.Write(framed, 0, framed.Length);
        output.Flush();
    }
}

}
