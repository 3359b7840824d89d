package passk;

import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The value wire (sandbox/runtime/values.py has the rule) in Java: values encoded and rebuilt by their declared
 * (generic) type, for the judge (Judge.java) and the candidate's server (Server.java).
 *
 * <p>A value is rebuilt as the type the prompt's signature declares, and any other tag is refused (Malformed):
 * int/Integer cross as 'i', long/Long as 'l', float as 'f' and double as 'd' (their raw IEEE bits), char as 'c',
 * String as 's' (WTF-8 of its UTF-16 units), List/ArrayList/arrays as 'A', Map/HashMap as 'M', Set as 'S',
 * Optional as 'N'/'Y', javatuples' Pair/Triplet/... as 'P', null as 'n'. A declared Object crosses as 'a' with the
 * name of its runtime type, from a fixed list (DYNAMIC below): Integer and Long (and the other boxes) stay apart,
 * as {@code equals} tells them apart; a list, map or set of any class crosses as java.util.List / Map / Set and is
 * rebuilt as ArrayList / LinkedHashMap / LinkedHashSet (they compare by content; the sender's order is kept). Any
 * other runtime type crosses as 'X' by name and is never rebuilt.
 *
 * <p>Decoded strings are interned: in the one program the original harness builds, the candidate's string
 * literals and the tests' are the same objects, and tests compare strings with {@code ==} (HumanEval-X's Java/137).
 *
 * <p>Only this file's code, the JDK's and javatuples' run while a value is rebuilt: no class the candidate
 * defined is ever loaded or called by the judge.
 */
public final class Wire {
    public static final int MAX_DEPTH = 100;
    public static final int MAX_MESSAGE = 1 << 30;

    private Wire() {}

    /** Bytes that are not a well-formed value of the expected type. */
    public static final class Malformed extends Exception {
        public Malformed(String why) {
            super(why, null, false, false);
        }
    }

    /** A value of a type the wire cannot carry: met as 'X' while decoding, or found while encoding. */
    public static final class Unsendable extends Exception {
        public final String type;

        public Unsendable(String type) {
            super(type, null, false, false);
            this.type = type;
        }
    }

    // ------------------------------------------------------------------ bytes

    /** A growing buffer of bytes being written. */
    public static final class Out {
        byte[] data = new byte[64];
        int size;

        void room(int more) {
            if (size + more > data.length) {
                long wanted = Math.max((long) data.length * 2, (long) size + more);
                if (wanted > Integer.MAX_VALUE - 8) throw new OutOfMemoryError("a message over 2 GiB");
                data = java.util.Arrays.copyOf(data, (int) wanted);
            }
        }

        public void b(int v) {
            room(1);
            data[size++] = (byte) v;
        }

        public void u16(int v) {
            b(v >>> 8);
            b(v);
        }

        public void u32(int v) {
            room(4);
            data[size++] = (byte) (v >>> 24);
            data[size++] = (byte) (v >>> 16);
            data[size++] = (byte) (v >>> 8);
            data[size++] = (byte) v;
        }

        public void u64(long v) {
            u32((int) (v >>> 32));
            u32((int) v);
        }

        public void bytes(byte[] v) {
            u32(v.length);
            raw(v, 0, v.length);
        }

        public void raw(byte[] v, int offset, int length) {
            room(length);
            System.arraycopy(v, offset, data, size, length);
            size += length;
        }

        public void string(String v) {
            bytes(wtf8(v));
        }

        public int size() {
            return size;
        }

        public byte[] toBytes() {
            return java.util.Arrays.copyOf(data, size);
        }
    }

    /** A message being read. */
    public static final class In {
        final byte[] data;
        int at;

        public In(byte[] data) {
            this.data = data;
        }

        public boolean done() {
            return at == data.length;
        }

        public int peek() throws Malformed {
            if (at >= data.length) throw new Malformed("truncated");
            return data[at] & 0xFF;
        }

        public int b() throws Malformed {
            if (at >= data.length) throw new Malformed("truncated");
            return data[at++] & 0xFF;
        }

        public long be(int count) throws Malformed {
            if (data.length - at < count) throw new Malformed("truncated");
            long v = 0;
            for (int i = 0; i < count; i++) v = (v << 8) | (data[at++] & 0xFF);
            return v;
        }

        public int u32() throws Malformed {
            return (int) be(4);
        }

        /** A count of elements: each takes a byte at least, so it cannot exceed what is left. */
        public int count() throws Malformed {
            long n = be(4) & 0xFFFFFFFFL;
            if (n > data.length - at) throw new Malformed("a count larger than the message");
            return (int) n;
        }

        public byte[] bytes() throws Malformed {
            long n = be(4) & 0xFFFFFFFFL;
            if (n > data.length - at) throw new Malformed("truncated");
            byte[] out = java.util.Arrays.copyOfRange(data, at, at + (int) n);
            at += (int) n;
            return out;
        }

        public String string() throws Malformed {
            return unwtf8(bytes());
        }

        void expect(int tag) throws Malformed {
            if (b() != tag) throw new Malformed("a value of another type than the signature's");
        }
    }

    // ------------------------------------------------------------------ WTF-8

    /** The UTF-8 of a string's UTF-16 units: a surrogate pair as its code point, a lone surrogate as its own. */
    public static byte[] wtf8(String s) {
        Out out = new Out();
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                out.b(c);
            } else if (c < 0x800) {
                out.b(0xC0 | (c >> 6));
                out.b(0x80 | (c & 0x3F));
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                out.b(0xF0 | (cp >> 18));
                out.b(0x80 | ((cp >> 12) & 0x3F));
                out.b(0x80 | ((cp >> 6) & 0x3F));
                out.b(0x80 | (cp & 0x3F));
            } else {
                out.b(0xE0 | (c >> 12));
                out.b(0x80 | ((c >> 6) & 0x3F));
                out.b(0x80 | (c & 0x3F));
            }
        }
        return out.toBytes();
    }

    /** The string of WTF-8 bytes; refuses anything else (overlong forms, a pair written as two halves, ...). */
    public static String unwtf8(byte[] v) throws Malformed {
        StringBuilder out = new StringBuilder(v.length);
        boolean loneHigh = false;  // the last unit was a high surrogate written on its own
        int i = 0;
        while (i < v.length) {
            int b0 = v[i] & 0xFF;
            int cp;
            int size;
            if (b0 < 0x80) {
                cp = b0;
                size = 1;
            } else if (b0 >= 0xC2 && b0 <= 0xDF) {
                cp = b0 & 0x1F;
                size = 2;
            } else if (b0 >= 0xE0 && b0 <= 0xEF) {
                cp = b0 & 0x0F;
                size = 3;
            } else if (b0 >= 0xF0 && b0 <= 0xF4) {
                cp = b0 & 0x07;
                size = 4;
            } else {
                throw new Malformed("a string that is not WTF-8");
            }
            if (i + size > v.length) throw new Malformed("a string that is not WTF-8");
            for (int k = 1; k < size; k++) {
                int b = v[i + k] & 0xFF;
                if ((b & 0xC0) != 0x80) throw new Malformed("a string that is not WTF-8");
                cp = (cp << 6) | (b & 0x3F);
            }
            if ((size == 3 && cp < 0x800) || (size == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
                throw new Malformed("a string that is not WTF-8");
            }
            i += size;
            if (cp >= 0x10000) {
                out.appendCodePoint(cp);
                loneHigh = false;
            } else {
                char c = (char) cp;
                if (loneHigh && Character.isLowSurrogate(c)) {
                    throw new Malformed("a string that is not WTF-8 (a surrogate pair written as two halves)");
                }
                out.append(c);
                loneHigh = Character.isHighSurrogate(c);
            }
        }
        return out.toString();
    }

    // ------------------------------------------------------------------ types

    /** A parameterized type built here (for the element types of dynamic containers). */
    private static final class Of implements ParameterizedType {
        private final Class<?> raw;
        private final Type[] args;

        Of(Class<?> raw, Type... args) {
            this.raw = raw;
            this.args = args;
        }

        @Override
        public Type[] getActualTypeArguments() {
            return args.clone();
        }

        @Override
        public Type getRawType() {
            return raw;
        }

        @Override
        public Type getOwnerType() {
            return null;
        }
    }

    static Class<?> raw(Type type) {
        if (type instanceof Class) return (Class<?>) type;
        if (type instanceof ParameterizedType) return (Class<?>) ((ParameterizedType) type).getRawType();
        if (type instanceof GenericArrayType) {
            return Array.newInstance(raw(((GenericArrayType) type).getGenericComponentType()), 0).getClass();
        }
        if (type instanceof WildcardType) return raw(((WildcardType) type).getUpperBounds()[0]);
        if (type instanceof TypeVariable) return raw(((TypeVariable<?>) type).getBounds()[0]);
        return Object.class;
    }

    /** The i-th type argument of `type` (Object for a raw type). */
    static Type arg(Type type, int i) {
        if (type instanceof ParameterizedType) {
            Type[] args = ((ParameterizedType) type).getActualTypeArguments();
            if (i < args.length) return args[i];
        }
        if (type instanceof WildcardType) return arg(((WildcardType) type).getUpperBounds()[0], i);
        return Object.class;
    }

    static Type component(Type type) {
        if (type instanceof GenericArrayType) return ((GenericArrayType) type).getGenericComponentType();
        return raw(type).getComponentType();
    }

    // javatuples' classes by arity (1..10); null where javatuples is not on the class path.
    private static final Class<?>[] TUPLES = new Class<?>[11];
    private static final Class<?> TUPLE;

    static {
        String[] names = {"Unit", "Pair", "Triplet", "Quartet", "Quintet", "Sextet", "Septet", "Octet", "Ennead", "Decade"};
        Class<?> base = null;
        try {
            base = Class.forName("org.javatuples.Tuple");
            for (int i = 0; i < names.length; i++) TUPLES[i + 1] = Class.forName("org.javatuples." + names[i]);
        } catch (ClassNotFoundException e) {
            base = null;
        }
        TUPLE = base;
    }

    static int tupleArity(Class<?> raw) {
        for (int i = 1; i < TUPLES.length; i++) if (TUPLES[i] != null && TUPLES[i] == raw) return i;
        return 0;
    }

    // The runtime types a declared Object may hold on the wire: (its name there, the type it is rebuilt as).
    private static final Map<String, Type> DYNAMIC = new HashMap<>();
    private static final Type OBJECT = Object.class;

    static {
        for (Class<?> box : new Class<?>[] {Boolean.class, Byte.class, Short.class, Integer.class, Long.class, Float.class,
                Double.class, Character.class, String.class, BigInteger.class}) {
            DYNAMIC.put(box.getName(), box);
        }
        DYNAMIC.put("java.util.List", new Of(List.class, OBJECT));
        DYNAMIC.put("java.util.Map", new Of(Map.class, OBJECT, OBJECT));
        DYNAMIC.put("java.util.Set", new Of(Set.class, OBJECT));
        DYNAMIC.put("java.util.Optional", new Of(Optional.class, OBJECT));
        for (int i = 1; i < TUPLES.length; i++) {
            if (TUPLES[i] == null) continue;
            Type[] objects = new Type[i];
            java.util.Arrays.fill(objects, OBJECT);
            DYNAMIC.put(TUPLES[i].getName(), new Of(TUPLES[i], objects));
        }
    }

    /** The name and type a declared Object holding `value` crosses as (null: a type the wire cannot carry). */
    static String dynamicName(Object value) {
        Class<?> c = value.getClass();
        if (DYNAMIC.containsKey(c.getName()) && c.getName().startsWith("java.")) return c.getName();
        if (TUPLE != null && tupleArity(c) > 0) return c.getName();
        if (value instanceof List) return "java.util.List";
        if (value instanceof Map) return "java.util.Map";
        if (value instanceof Set) return "java.util.Set";
        if (value instanceof Optional) return "java.util.Optional";
        return null;
    }

    /** Whether the wire carries values of this declared type (checked when the judge starts). */
    public static boolean carries(Type type) {
        Class<?> raw = raw(type);
        if (raw.isPrimitive() || raw == Object.class || raw == String.class || raw == BigInteger.class) return true;
        if (raw == Boolean.class || raw == Byte.class || raw == Short.class || raw == Integer.class || raw == Long.class
                || raw == Float.class || raw == Double.class || raw == Character.class) {
            return true;
        }
        if (raw.isArray()) return carries(component(type));
        int n = kindArity(raw);
        for (int i = 0; i < n; i++) if (!carries(arg(type, i))) return false;
        return n > 0;
    }

    /** How many type arguments a container type has (0: not a container the wire carries). */
    private static int kindArity(Class<?> raw) {
        if (isSequence(raw) || isSet(raw) || raw == Optional.class) return 1;
        if (isMap(raw)) return 2;
        return tupleArity(raw);
    }

    private static boolean isSequence(Class<?> raw) {
        return raw == List.class || raw == ArrayList.class || raw == LinkedList.class || raw == Collection.class
                || raw == Iterable.class;
    }

    private static boolean isSet(Class<?> raw) {
        return raw == Set.class || raw == HashSet.class || raw == LinkedHashSet.class || raw == TreeSet.class;
    }

    private static boolean isMap(Class<?> raw) {
        return raw == Map.class || raw == HashMap.class || raw == LinkedHashMap.class || raw == TreeMap.class;
    }

    // ------------------------------------------------------------------ encoding

    /** Encodes `value` as the declared `type` (Unsendable: its runtime type is not one the wire carries as that). */
    public static void encode(Out w, Type type, Object value, int depth) throws Unsendable {
        if (depth > MAX_DEPTH) {
            w.b('X');
            w.string("deeply nested value");
            return;
        }
        Class<?> raw = raw(type);
        if (raw.isPrimitive()) {
            scalar(w, raw, value);
            return;
        }
        if (value == null) {
            w.b('n');
            return;
        }
        if (raw == Object.class) {
            String name = dynamicName(value);
            if (name == null) {
                w.b('X');
                w.string(value.getClass().getName());
                return;
            }
            w.b('a');
            w.string(name);
            encode(w, DYNAMIC.get(name), value, depth + 1);
            return;
        }
        if (!raw.isInstance(value)) throw new Unsendable(value.getClass().getName());
        Class<?> unboxed = unbox(raw);
        if (unboxed != null) {
            scalar(w, unboxed, value);
        } else if (raw == String.class) {
            w.b('s');
            w.string((String) value);
        } else if (raw == BigInteger.class) {
            BigInteger v = (BigInteger) value;
            w.b('z');
            if (v.signum() == 0) {
                w.u32(0);
                return;
            }
            int size = (v.abs().bitLength() + 8) / 8;  // values.py's size: room for the sign bit of |v|
            byte[] minimal = v.toByteArray();
            w.u32(size);
            for (int i = minimal.length; i < size; i++) w.b(v.signum() < 0 ? 0xFF : 0);
            w.raw(minimal, Math.max(0, minimal.length - size), Math.min(size, minimal.length));
        } else if (raw.isArray()) {
            int n = Array.getLength(value);
            Type item = component(type);
            w.b('A');
            w.u32(n);
            for (int i = 0; i < n; i++) encode(w, item, Array.get(value, i), depth + 1);
        } else if (isSequence(raw) || isSet(raw)) {
            Collection<?> items = (Collection<?>) value;
            Type item = arg(type, 0);
            Object[] all = items.toArray();
            w.b(isSet(raw) ? 'S' : 'A');
            w.u32(all.length);
            for (Object element : all) encode(w, item, element, depth + 1);
        } else if (isMap(raw)) {
            Map<?, ?> map = (Map<?, ?>) value;
            Type key = arg(type, 0);
            Type item = arg(type, 1);
            Object[] entries = map.entrySet().toArray();
            w.b('M');
            w.u32(entries.length);
            for (Object entry : entries) {
                Map.Entry<?, ?> e = (Map.Entry<?, ?>) entry;
                encode(w, key, e.getKey(), depth + 1);
                encode(w, item, e.getValue(), depth + 1);
            }
        } else if (raw == Optional.class) {
            Optional<?> v = (Optional<?>) value;
            if (v.isEmpty()) {
                w.b('N');
            } else {
                w.b('Y');
                encode(w, arg(type, 0), v.get(), depth + 1);
            }
        } else if (tupleArity(raw) > 0) {
            org.javatuples.Tuple v = (org.javatuples.Tuple) value;
            int n = v.getSize();
            w.b('P');
            w.u32(n);
            for (int i = 0; i < n; i++) encode(w, arg(type, i), v.getValue(i), depth + 1);
        } else {
            throw new Unsendable(raw.getName());
        }
    }

    private static Class<?> unbox(Class<?> raw) {
        if (raw == Boolean.class) return boolean.class;
        if (raw == Byte.class) return byte.class;
        if (raw == Short.class) return short.class;
        if (raw == Integer.class) return int.class;
        if (raw == Long.class) return long.class;
        if (raw == Float.class) return float.class;
        if (raw == Double.class) return double.class;
        if (raw == Character.class) return char.class;
        return null;
    }

    private static void scalar(Out w, Class<?> primitive, Object value) throws Unsendable {
        try {
            if (primitive == boolean.class) {
                w.b((Boolean) value ? 'T' : 'F');
            } else if (primitive == byte.class) {
                w.b('b');
                w.b((Byte) value);
            } else if (primitive == short.class) {
                w.b('h');
                w.u16((Short) value);
            } else if (primitive == int.class) {
                w.b('i');
                w.u32((Integer) value);
            } else if (primitive == long.class) {
                w.b('l');
                w.u64((Long) value);
            } else if (primitive == float.class) {
                w.b('f');
                w.u32(Float.floatToRawIntBits((Float) value));
            } else if (primitive == double.class) {
                w.b('d');
                w.u64(Double.doubleToRawLongBits((Double) value));
            } else if (primitive == char.class) {
                w.b('c');
                w.u32((Character) value);
            } else {
                throw new Unsendable(primitive.getName());
            }
        } catch (ClassCastException | NullPointerException e) {
            throw new Unsendable(value == null ? "null" : value.getClass().getName());
        }
    }

    // ------------------------------------------------------------------ decoding

    /** Rebuilds a value of the declared `type`; refuses any other (Malformed), and 'X' (Unsendable). */
    public static Object decode(In r, Type type, int depth) throws Malformed, Unsendable {
        if (depth > MAX_DEPTH) throw new Malformed("nested too deeply");
        Class<?> raw = raw(type);
        int tag = r.b();
        if (tag == 'X') throw new Unsendable(r.string());
        if (raw.isPrimitive()) return scalar(r, raw, tag);
        if (tag == 'n') return null;
        if (raw == Object.class) {
            if (tag != 'a') throw new Malformed("a value of another type than the signature's");
            String name = r.string();
            Type held = DYNAMIC.get(name);
            if (held == null) throw new Malformed("a dynamic value of a type passk does not rebuild: " + name);
            return decode(r, held, depth + 1);
        }
        Class<?> unboxed = unbox(raw);
        if (unboxed != null) return scalar(r, unboxed, tag);
        if (raw == String.class) {
            if (tag != 's') throw new Malformed("a value of another type than the signature's");
            return r.string().intern();
        }
        if (raw == BigInteger.class) {
            if (tag != 'z') throw new Malformed("a value of another type than the signature's");
            byte[] bytes = r.bytes();
            return bytes.length == 0 ? BigInteger.ZERO : new BigInteger(bytes);
        }
        if (raw.isArray()) {
            if (tag != 'A') throw new Malformed("a value of another type than the signature's");
            int n = r.count();
            Type item = component(type);
            Object out = Array.newInstance(raw.getComponentType(), n);
            for (int i = 0; i < n; i++) {
                Object element = decode(r, item, depth + 1);
                if (element == null && raw.getComponentType().isPrimitive()) throw new Malformed("null in a primitive array");
                Array.set(out, i, element);
            }
            return out;
        }
        if (isSequence(raw)) {
            if (tag != 'A') throw new Malformed("a value of another type than the signature's");
            int n = r.count();
            Type item = arg(type, 0);
            List<Object> out = raw == LinkedList.class ? new LinkedList<>() : new ArrayList<>(n);
            for (int i = 0; i < n; i++) out.add(decode(r, item, depth + 1));
            return out;
        }
        if (isSet(raw)) {
            if (tag != 'S') throw new Malformed("a value of another type than the signature's");
            int n = r.count();
            Type item = arg(type, 0);
            Set<Object> out = raw == HashSet.class ? new HashSet<>() : raw == TreeSet.class ? new TreeSet<>() : new LinkedHashSet<>();
            for (int i = 0; i < n; i++) {
                try {
                    if (!out.add(decode(r, item, depth + 1))) throw new Malformed("a set holding a value twice");
                } catch (ClassCastException | NullPointerException e) {
                    throw new Malformed("a sorted set of values that do not compare");
                }
            }
            return out;
        }
        if (isMap(raw)) {
            if (tag != 'M') throw new Malformed("a value of another type than the signature's");
            int n = r.count();
            Type key = arg(type, 0);
            Type item = arg(type, 1);
            Map<Object, Object> out = raw == HashMap.class ? new HashMap<>() : raw == TreeMap.class ? new TreeMap<>() : new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                Object k = decode(r, key, depth + 1);
                Object v = decode(r, item, depth + 1);
                try {
                    if (out.containsKey(k)) throw new Malformed("a map holding a key twice");
                    out.put(k, v);
                } catch (ClassCastException | NullPointerException e) {
                    throw new Malformed("a sorted map of keys that do not compare");
                }
            }
            return out;
        }
        if (raw == Optional.class) {
            if (tag == 'N') return Optional.empty();
            if (tag != 'Y') throw new Malformed("a value of another type than the signature's");
            Object held = decode(r, arg(type, 0), depth + 1);
            if (held == null) throw new Malformed("a present optional holding null");
            return Optional.of(held);
        }
        int arity = tupleArity(raw);
        if (arity > 0) {
            if (tag != 'P') throw new Malformed("a value of another type than the signature's");
            if (r.count() != arity) throw new Malformed("a tuple of another size than the signature's");
            Object[] items = new Object[arity];
            for (int i = 0; i < arity; i++) items[i] = decode(r, arg(type, i), depth + 1);
            return tuple(raw, items);
        }
        throw new Malformed("a value of a type passk does not rebuild: " + raw.getName());
    }

    private static Object tuple(Class<?> raw, Object[] items) throws Malformed {
        for (Constructor<?> constructor : raw.getConstructors()) {
            if (constructor.getParameterCount() == items.length) {
                try {
                    return constructor.newInstance(items);
                } catch (ReflectiveOperationException | IllegalArgumentException e) {
                    throw new Malformed("a tuple that " + raw.getSimpleName() + " cannot hold");
                }
            }
        }
        throw new Malformed("a tuple that " + raw.getSimpleName() + " cannot hold");
    }

    private static Object scalar(In r, Class<?> primitive, int tag) throws Malformed {
        if (primitive == boolean.class) {
            if (tag == 'T') return Boolean.TRUE;
            if (tag == 'F') return Boolean.FALSE;
        } else if (primitive == byte.class && tag == 'b') {
            return (byte) r.be(1);
        } else if (primitive == short.class && tag == 'h') {
            return (short) r.be(2);
        } else if (primitive == int.class && tag == 'i') {
            return (int) r.be(4);
        } else if (primitive == long.class && tag == 'l') {
            return r.be(8);
        } else if (primitive == float.class && tag == 'f') {
            return Float.intBitsToFloat((int) r.be(4));
        } else if (primitive == double.class && tag == 'd') {
            return Double.longBitsToDouble(r.be(8));
        } else if (primitive == char.class && tag == 'c') {
            long unit = r.be(4);
            if (unit > 0xFFFF) throw new Malformed("a character out of range");
            return (char) unit;
        }
        throw new Malformed("a value of another type than the signature's");
    }

    // ------------------------------------------------------------------ framing

    /** One framed message; null on a clean end of input before its first byte; Malformed on a cut one. */
    public static byte[] receive(java.io.InputStream in) throws java.io.IOException, Malformed {
        byte[] header = new byte[4];
        int got = 0;
        while (got < 4) {
            int n = in.read(header, got, 4 - got);
            if (n < 0) {
                if (got == 0) return null;
                throw new Malformed("a message cut short");
            }
            got += n;
        }
        long size = ((header[0] & 0xFFL) << 24) | ((header[1] & 0xFF) << 16) | ((header[2] & 0xFF) << 8) | (header[3] & 0xFF);
        if (size > MAX_MESSAGE) throw new Malformed("a message over 1 GiB");
        byte[] message = new byte[(int) size];
        got = 0;
        while (got < size) {
            int n = in.read(message, got, (int) size - got);
            if (n < 0) throw new Malformed("a message cut short");
            got += n;
        }
        return message;
    }

    /**
     * An inherited descriptor as a FileDescriptor. Every passk process is non-dumpable, so /proc/self/fd is not
     * the process's to open; java.io has no public way to name a descriptor above 2, hence the reflection (the
     * runs carry --add-opens=java.base/java.io=ALL-UNNAMED).
     */
    public static java.io.FileDescriptor descriptor(int fd) {
        try {
            java.io.FileDescriptor d = new java.io.FileDescriptor();
            java.lang.reflect.Field field = java.io.FileDescriptor.class.getDeclaredField("fd");
            field.setAccessible(true);
            field.setInt(d, fd);
            return d;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("passk: descriptor " + fd + " cannot be opened: " + e, e);
        }
    }

    public static void send(java.io.OutputStream out, Out message) throws java.io.IOException {
        byte[] header = {(byte) (message.size >>> 24), (byte) (message.size >>> 16), (byte) (message.size >>> 8), (byte) message.size};
        out.write(header);
        out.write(message.data, 0, message.size);
        out.flush();
    }
}
