// The value wire (sandbox/runtime/values.py has the rule) in C++: the codec, the judge's call and the
// candidate's server. Installed in the C++ image as /opt/passk/cpp/passk_wire.hpp and included after the
// problem's own code by the judge (judge.cpp) and by passk's server for the candidate (passk_server.cpp, a
// translation unit of its own, so that no macro or declaration of the model's code reaches it).
//
// A value is rebuilt as the C++ type the prompt's signature names: Codec<T> encodes and decodes exactly that
// type, and refuses any other tag. boost::any (and std::any) cross with the name of the type they hold, from a
// fixed list (visit_types below); any other held type crosses as X, "a value of a type the wire cannot carry".
// MultiPL-E's unions cross as `a <member type> <value>` through a Codec that sandbox/languages/cpp.py writes for
// each problem after this header.
//
// The judge trusts nothing it reads on its reply descriptor: a reply is checked to be exactly one well-formed
// value (skip) before it is rebuilt, a message is read as its bytes arrive (a length that lies ends as a cut
// message, never as an allocation), and anything waiting there before a call or before the pass was sent
// unasked: BROKEN, flagged out_of_turn.
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <deque>
#include <exception>
#include <list>
#include <map>
#include <new>
#include <optional>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#if __has_include(<any>)
#include <any>
#endif

namespace passk {

constexpr int MAX_DEPTH = 100;

struct Malformed : std::exception {
    const char* why;
    explicit Malformed(const char* w) : why(w) {}
    const char* what() const noexcept override { return why; }
};

struct Writer {
    std::string buffer;
    void byte(char c) { buffer.push_back(c); }
    void u32(std::uint32_t v) {
        for (int shift = 24; shift >= 0; shift -= 8) buffer.push_back(static_cast<char>((v >> shift) & 0xFF));
    }
    void u64(std::uint64_t v) {
        for (int shift = 56; shift >= 0; shift -= 8) buffer.push_back(static_cast<char>((v >> shift) & 0xFF));
    }
    void bytes(const char* data, std::size_t size) { u32(static_cast<std::uint32_t>(size)); buffer.append(data, size); }
};

struct Reader {
    const unsigned char* data;
    std::size_t size;
    std::size_t at = 0;
    int depth = 0;
    unsigned char byte() {
        if (at >= size) throw Malformed("truncated");
        return data[at++];
    }
    std::uint64_t be(int count) {
        if (size - at < static_cast<std::size_t>(count)) throw Malformed("truncated");
        std::uint64_t v = 0;
        for (int i = 0; i < count; i++) v = (v << 8) | data[at++];
        return v;
    }
    std::uint32_t u32() { return static_cast<std::uint32_t>(be(4)); }
    std::uint32_t count() {
        std::uint32_t n = u32();
        if (n > size - at) throw Malformed("count larger than the message");  // every element takes a byte at least
        return n;
    }
    std::string bytes() {
        std::uint32_t n = u32();
        if (n > size - at) throw Malformed("truncated");
        std::string s(reinterpret_cast<const char*>(data + at), n);
        at += n;
        return s;
    }
    void expect(char tag) {
        if (static_cast<char>(byte()) != tag) throw Malformed("a value of another type than the signature's");
    }
    struct Nest {
        Reader& r;
        explicit Nest(Reader& reader) : r(reader) { if (++r.depth > MAX_DEPTH) throw Malformed("nested too deeply"); }
        ~Nest() { --r.depth; }
    };
};

// Steps over one well-formed value of any type (values.py's grammar), so that a reply is known to be exactly
// one value before anything is built from it.
inline void skip(Reader& r, int depth = 0) {
    if (depth > MAX_DEPTH) throw Malformed("nested too deeply");
    char tag = static_cast<char>(r.byte());
    switch (tag) {
        case 'n': case 'u': case 'F': case 'T': case 'N': return;
        case 'b': case 'B': r.be(1); return;
        case 'h': case 'H': r.be(2); return;
        case 'i': case 'I': case 'f': case 'c': r.be(4); return;
        case 'l': case 'L': case 'd': r.be(8); return;
        case 'z': case 's': case 'X': r.bytes(); return;
        case 'A': case 'P': case 'S': {
            std::uint32_t n = r.count();
            for (std::uint32_t i = 0; i < n; i++) skip(r, depth + 1);
            return;
        }
        case 'M': {
            std::uint32_t n = r.count();
            for (std::uint32_t i = 0; i < n; i++) { skip(r, depth + 1); skip(r, depth + 1); }
            return;
        }
        case 'O': {
            std::uint32_t n = r.count();
            for (std::uint32_t i = 0; i < n; i++) { r.bytes(); skip(r, depth + 1); }
            return;
        }
        case 'Y': skip(r, depth + 1); return;
        case 'a': r.bytes(); skip(r, depth + 1); return;
        default: throw Malformed("an unknown tag");
    }
}

// The demangled name of a type (for X values and for exceptions the candidate threw).
inline std::string type_name(const std::type_info& info) {
    int status = 0;
    char* shown = abi::__cxa_demangle(info.name(), nullptr, nullptr, &status);
    std::string name = (status == 0 && shown) ? shown : info.name();
    std::free(shown);
    return name;
}

template <class T, class = void>
struct Codec;  // no codec: a signature with this type does not compile (the judge first: not the model's fault)

// ---------------------------------------------------------------- scalars

template <>
struct Codec<bool> {
    static void encode(Writer& w, bool v) { w.byte(v ? 'T' : 'F'); }
    static bool decode(Reader& r) {
        char tag = static_cast<char>(r.byte());
        if (tag == 'T') return true;
        if (tag == 'F') return false;
        throw Malformed("a value of another type than the signature's");
    }
};

template <>
struct Codec<char> {
    static void encode(Writer& w, char v) { w.byte('c'); w.u32(static_cast<unsigned char>(v)); }
    static char decode(Reader& r) {
        r.expect('c');
        std::uint32_t v = r.u32();
        if (v > 255) throw Malformed("a character out of range");
        return static_cast<char>(static_cast<unsigned char>(v));
    }
};

template <class T>
constexpr char integer_tag() {
    constexpr bool s = std::is_signed_v<T>;
    switch (sizeof(T)) {
        case 1: return s ? 'b' : 'B';
        case 2: return s ? 'h' : 'H';
        case 4: return s ? 'i' : 'I';
        default: return s ? 'l' : 'L';
    }
}

template <class T>
struct Codec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>>> {
    static_assert(sizeof(T) <= 8, "integers up to 64 bits");
    static void encode(Writer& w, T v) {
        w.byte(integer_tag<T>());
        auto bits = static_cast<std::uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>(v));
        for (int shift = 8 * static_cast<int>(sizeof(T)) - 8; shift >= 0; shift -= 8) w.byte(static_cast<char>((bits >> shift) & 0xFF));
    }
    static T decode(Reader& r) {
        r.expect(integer_tag<T>());
        std::uint64_t bits = r.be(sizeof(T));
        if constexpr (std::is_signed_v<T>) {
            // sign-extend from sizeof(T) bytes
            if (sizeof(T) < 8 && (bits >> (8 * sizeof(T) - 1)) & 1) bits |= ~std::uint64_t(0) << (8 * sizeof(T));
            return static_cast<T>(static_cast<std::int64_t>(bits));
        } else {
            return static_cast<T>(bits);
        }
    }
};

template <>
struct Codec<float> {
    static void encode(Writer& w, float v) {
        std::uint32_t bits;
        std::memcpy(&bits, &v, 4);
        w.byte('f');
        w.u32(bits);
    }
    static float decode(Reader& r) {
        r.expect('f');
        std::uint32_t bits = r.u32();
        float v;
        std::memcpy(&v, &bits, 4);
        return v;
    }
};

template <>
struct Codec<double> {
    static void encode(Writer& w, double v) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, 8);
        w.byte('d');
        w.u64(bits);
    }
    static double decode(Reader& r) {
        r.expect('d');
        std::uint64_t bits = r.be(8);
        double v;
        std::memcpy(&v, &bits, 8);
        return v;
    }
};

template <>
struct Codec<long double> {  // crosses as the binary64 nearest to it
    static void encode(Writer& w, long double v) { Codec<double>::encode(w, static_cast<double>(v)); }
    static long double decode(Reader& r) { return Codec<double>::decode(r); }
};

template <>
struct Codec<std::string> {
    static void encode(Writer& w, const std::string& v) { w.byte('s'); w.bytes(v.data(), v.size()); }
    static std::string decode(Reader& r) { r.expect('s'); return r.bytes(); }
};

// A C string decoded lives as long as the process: a test or a candidate may keep the pointer.
inline const char* keep(std::string text) {
    static std::list<std::string> kept;
    kept.push_back(std::move(text));
    return kept.back().c_str();
}

template <>
struct Codec<const char*> {
    static void encode(Writer& w, const char* v) {
        if (v == nullptr) { w.byte('n'); return; }
        w.byte('s');
        w.bytes(v, std::strlen(v));
    }
    static const char* decode(Reader& r) {
        if (r.at < r.size && r.data[r.at] == 'n') { r.at++; return nullptr; }
        return keep(Codec<std::string>::decode(r));
    }
};

template <>
struct Codec<char*> {
    static void encode(Writer& w, char* v) { Codec<const char*>::encode(w, v); }
    static char* decode(Reader& r) { return const_cast<char*>(Codec<const char*>::decode(r)); }
};

// ---------------------------------------------------------------- containers

template <class T> struct is_sequence : std::false_type {};
template <class T, class A> struct is_sequence<std::vector<T, A>> : std::true_type {};
template <class T, class A> struct is_sequence<std::list<T, A>> : std::true_type {};
template <class T, class A> struct is_sequence<std::deque<T, A>> : std::true_type {};

template <class S>
struct Codec<S, std::enable_if_t<is_sequence<S>::value>> {
    using Item = typename S::value_type;
    static void encode(Writer& w, const S& v) {
        w.byte('A');
        w.u32(static_cast<std::uint32_t>(v.size()));
        for (const auto& item : v) Codec<Item>::encode(w, item);
    }
    static S decode(Reader& r) {
        r.expect('A');
        Reader::Nest nest(r);
        std::uint32_t n = r.count();
        S out;
        for (std::uint32_t i = 0; i < n; i++) out.push_back(Codec<Item>::decode(r));
        return out;
    }
};

template <class T, std::size_t N>
struct Codec<std::array<T, N>> {
    static void encode(Writer& w, const std::array<T, N>& v) {
        w.byte('A');
        w.u32(static_cast<std::uint32_t>(N));
        for (const auto& item : v) Codec<T>::encode(w, item);
    }
    static std::array<T, N> decode(Reader& r) {
        r.expect('A');
        Reader::Nest nest(r);
        if (r.count() != N) throw Malformed("an array of another length than the signature's");
        std::array<T, N> out{};
        for (auto& item : out) item = Codec<T>::decode(r);
        return out;
    }
};

template <class T> struct is_map : std::false_type {};
template <class K, class V, class C, class A> struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A> struct is_map<std::unordered_map<K, V, H, E, A>> : std::true_type {};

template <class M>
struct Codec<M, std::enable_if_t<is_map<M>::value>> {
    using Key = typename M::key_type;
    using Value = typename M::mapped_type;
    static void encode(Writer& w, const M& v) {
        w.byte('M');
        w.u32(static_cast<std::uint32_t>(v.size()));
        for (const auto& [key, value] : v) { Codec<Key>::encode(w, key); Codec<Value>::encode(w, value); }
    }
    static M decode(Reader& r) {
        r.expect('M');
        Reader::Nest nest(r);
        std::uint32_t n = r.count();
        M out;
        for (std::uint32_t i = 0; i < n; i++) {
            Key key = Codec<Key>::decode(r);
            Value value = Codec<Value>::decode(r);
            out.insert_or_assign(std::move(key), std::move(value));
        }
        return out;
    }
};

template <class T> struct is_set : std::false_type {};
template <class K, class C, class A> struct is_set<std::set<K, C, A>> : std::true_type {};
template <class K, class H, class E, class A> struct is_set<std::unordered_set<K, H, E, A>> : std::true_type {};

template <class S>
struct Codec<S, std::enable_if_t<is_set<S>::value>> {
    using Item = typename S::value_type;
    static void encode(Writer& w, const S& v) {
        w.byte('S');
        w.u32(static_cast<std::uint32_t>(v.size()));
        for (const auto& item : v) Codec<Item>::encode(w, item);
    }
    static S decode(Reader& r) {
        r.expect('S');
        Reader::Nest nest(r);
        std::uint32_t n = r.count();
        S out;
        for (std::uint32_t i = 0; i < n; i++) out.insert(Codec<Item>::decode(r));
        return out;
    }
};

template <class A, class B>
struct Codec<std::pair<A, B>> {
    static void encode(Writer& w, const std::pair<A, B>& v) {
        w.byte('P');
        w.u32(2);
        Codec<A>::encode(w, v.first);
        Codec<B>::encode(w, v.second);
    }
    static std::pair<A, B> decode(Reader& r) {
        r.expect('P');
        Reader::Nest nest(r);
        if (r.u32() != 2) throw Malformed("a tuple of another size than the signature's");
        A a = Codec<A>::decode(r);
        B b = Codec<B>::decode(r);
        return {std::move(a), std::move(b)};
    }
};

template <class... T>
struct Codec<std::tuple<T...>> {
    static void encode(Writer& w, const std::tuple<T...>& v) {
        w.byte('P');
        w.u32(sizeof...(T));
        std::apply([&](const auto&... item) { (Codec<std::decay_t<decltype(item)>>::encode(w, item), ...); }, v);
    }
    static std::tuple<T...> decode(Reader& r) {
        r.expect('P');
        Reader::Nest nest(r);
        if (r.u32() != sizeof...(T)) throw Malformed("a tuple of another size than the signature's");
        return std::tuple<T...>{Codec<T>::decode(r)...};  // braced: evaluated left to right
    }
};

template <class T>
struct Codec<std::optional<T>> {
    static void encode(Writer& w, const std::optional<T>& v) {
        if (!v) { w.byte('N'); return; }
        w.byte('Y');
        Codec<T>::encode(w, *v);
    }
    static std::optional<T> decode(Reader& r) {
        char tag = static_cast<char>(r.byte());
        if (tag == 'N') return std::nullopt;
        if (tag != 'Y') throw Malformed("a value of another type than the signature's");
        Reader::Nest nest(r);
        return Codec<T>::decode(r);
    }
};

// ---------------------------------------------------------------- dynamic values (boost::any, std::any)

// The types an any may hold on the wire: (its name on the wire, the C++ type).
template <class T> struct Named { static constexpr const char* name = nullptr; };
#define PASSK_NAMED(N, ...) template <> struct Named<__VA_ARGS__> { static constexpr const char* name = N; };
PASSK_NAMED("int", int)
PASSK_NAMED("long", long)
PASSK_NAMED("long long", long long)
PASSK_NAMED("unsigned int", unsigned)
PASSK_NAMED("unsigned long", unsigned long)
PASSK_NAMED("unsigned long long", unsigned long long)
PASSK_NAMED("short", short)
PASSK_NAMED("unsigned short", unsigned short)
PASSK_NAMED("signed char", signed char)
PASSK_NAMED("unsigned char", unsigned char)
PASSK_NAMED("char", char)
PASSK_NAMED("bool", bool)
PASSK_NAMED("float", float)
PASSK_NAMED("double", double)
PASSK_NAMED("std::string", std::string)
PASSK_NAMED("const char*", const char*)
PASSK_NAMED("std::vector<int>", std::vector<int>)
PASSK_NAMED("std::vector<long>", std::vector<long>)
PASSK_NAMED("std::vector<long long>", std::vector<long long>)
PASSK_NAMED("std::vector<double>", std::vector<double>)
PASSK_NAMED("std::vector<float>", std::vector<float>)
PASSK_NAMED("std::vector<std::string>", std::vector<std::string>)
PASSK_NAMED("std::vector<char>", std::vector<char>)
PASSK_NAMED("std::vector<bool>", std::vector<bool>)
PASSK_NAMED("std::vector<std::vector<int>>", std::vector<std::vector<int>>)
PASSK_NAMED("std::vector<std::vector<long>>", std::vector<std::vector<long>>)
PASSK_NAMED("std::map<int, int>", std::map<int, int>)
PASSK_NAMED("std::map<long, long>", std::map<long, long>)
PASSK_NAMED("std::map<std::string, int>", std::map<std::string, int>)
PASSK_NAMED("std::map<std::string, long>", std::map<std::string, long>)
PASSK_NAMED("std::map<std::string, std::string>", std::map<std::string, std::string>)
#undef PASSK_NAMED

template <class Any, class Holds, class Cast>
struct AnyCodec {
    // Try each named type in turn; `f(T*)` is called with the held type.
    template <class F>
    static bool visit_types(F&& f) {
        return (f(static_cast<int*>(nullptr)) || f(static_cast<long*>(nullptr)) || f(static_cast<long long*>(nullptr))
                || f(static_cast<unsigned*>(nullptr)) || f(static_cast<unsigned long*>(nullptr))
                || f(static_cast<unsigned long long*>(nullptr)) || f(static_cast<short*>(nullptr))
                || f(static_cast<unsigned short*>(nullptr)) || f(static_cast<signed char*>(nullptr))
                || f(static_cast<unsigned char*>(nullptr)) || f(static_cast<char*>(nullptr))
                || f(static_cast<bool*>(nullptr)) || f(static_cast<float*>(nullptr)) || f(static_cast<double*>(nullptr))
                || f(static_cast<std::string*>(nullptr)) || f(static_cast<const char**>(nullptr))
                || f(static_cast<std::vector<int>*>(nullptr)) || f(static_cast<std::vector<long>*>(nullptr))
                || f(static_cast<std::vector<long long>*>(nullptr)) || f(static_cast<std::vector<double>*>(nullptr))
                || f(static_cast<std::vector<float>*>(nullptr)) || f(static_cast<std::vector<std::string>*>(nullptr))
                || f(static_cast<std::vector<char>*>(nullptr)) || f(static_cast<std::vector<bool>*>(nullptr))
                || f(static_cast<std::vector<std::vector<int>>*>(nullptr))
                || f(static_cast<std::vector<std::vector<long>>*>(nullptr)) || f(static_cast<std::map<int, int>*>(nullptr))
                || f(static_cast<std::map<long, long>*>(nullptr)) || f(static_cast<std::map<std::string, int>*>(nullptr))
                || f(static_cast<std::map<std::string, long>*>(nullptr))
                || f(static_cast<std::map<std::string, std::string>*>(nullptr)));
    }
    static void encode(Writer& w, const Any& v) {
        if (Holds::empty(v)) { w.byte('a'); w.bytes("", 0); w.byte('n'); return; }
        const std::type_info& held = Holds::type(v);
        bool done = visit_types([&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            if (held != typeid(T)) return false;
            const char* name = Named<T>::name;
            w.byte('a');
            w.bytes(name, std::strlen(name));
            Codec<T>::encode(w, Cast::template get<T>(v));
            return true;
        });
        if (!done) {
            std::string name = type_name(held);
            w.byte('X');
            w.bytes(name.data(), name.size());
        }
    }
    static Any decode(Reader& r) {
        r.expect('a');
        Reader::Nest nest(r);
        std::string name = r.bytes();
        if (name.empty()) { r.expect('n'); return Any(); }
        Any out;
        bool done = visit_types([&](auto* tag) {
            using T = std::remove_pointer_t<decltype(tag)>;
            if (name != Named<T>::name) return false;
            out = Any(Codec<T>::decode(r));
            return true;
        });
        if (!done) throw Malformed("an any of a type passk does not rebuild");
        return out;
    }
};

#ifdef BOOST_ANY_INCLUDED
struct BoostHolds {
    static bool empty(const boost::any& v) { return v.empty(); }
    static const std::type_info& type(const boost::any& v) { return v.type(); }
};
struct BoostCast {
    template <class T> static const T& get(const boost::any& v) { return *boost::any_cast<T>(&v); }
};
template <>
struct Codec<boost::any> : AnyCodec<boost::any, BoostHolds, BoostCast> {};
#endif

#if defined(__cpp_lib_any)
struct StdHolds {
    static bool empty(const std::any& v) { return !v.has_value(); }
    static const std::type_info& type(const std::any& v) { return v.type(); }
};
struct StdCast {
    template <class T> static const T& get(const std::any& v) { return *std::any_cast<T>(&v); }
};
template <>
struct Codec<std::any> : AnyCodec<std::any, StdHolds, StdCast> {};
#endif

// ---------------------------------------------------------------- framing on descriptors

// False when the other side is gone (EPIPE: SIGPIPE is ignored by both sides, see below).
inline bool write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

inline bool send(int fd, const std::string& message) {
    Writer header;
    header.u32(static_cast<std::uint32_t>(message.size()));
    std::string framed = header.buffer + message;
    return write_all(fd, framed.data(), framed.size());
}

// A write to a pipe whose reader is gone fails with EPIPE instead of killing the writer: the judge then
// reports that the candidate ended, and the server simply stops.
inline const bool sigpipe_ignored = (::signal(SIGPIPE, SIG_IGN), true);

// One framed message; false on a clean end of input before its first byte; throws Malformed on a cut one. The
// buffer grows with the bytes that arrived, never with the length the header claims.
inline bool receive(int fd, std::string& message) {
    unsigned char header[4];
    std::size_t got = 0;
    while (got < 4) {
        ssize_t n = ::read(fd, header + got, 4 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (got == 0) return false;
            throw Malformed("a message cut short");
        }
        got += static_cast<std::size_t>(n);
    }
    std::uint32_t size = (std::uint32_t(header[0]) << 24) | (std::uint32_t(header[1]) << 16) | (std::uint32_t(header[2]) << 8) | header[3];
    if (size > (1u << 30)) throw Malformed("a message over 1 GiB");
    message.clear();
    char chunk[65536];
    while (message.size() < size) {
        std::size_t want = std::min<std::size_t>(sizeof chunk, size - message.size());
        ssize_t n = ::read(fd, chunk, want);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw Malformed("a message cut short");
        message.append(chunk, static_cast<std::size_t>(n));
    }
    return true;
}

// ---------------------------------------------------------------- the judge's side

namespace judge {

constexpr int REPORT = 3, CALLS = 4, REPLIES = 5;

[[noreturn]] inline void end(const std::string& record) {
    std::fflush(stdout);
    std::fflush(stderr);
    write_all(REPORT, record.data(), record.size());
    std::_Exit(1);
}

// Anything waiting on the reply pipe before a call was sent (or before the pass) was sent unasked.
inline void check_unasked(const char* when) {
    struct pollfd p = {REPLIES, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
        char byte;
        if (::read(REPLIES, &byte, 1) == 1)
            end(std::string("BROKEN the candidate's process wrote on its channel ") + when);
    }
}

// The value of a reply that holds exactly one value (checked before anything is built, so that a type that
// can be neither copied nor moved can be returned straight from its decoder).
template <class R>
R returned(Reader& r, const char* name) {
    if (r.at < r.size && r.data[r.at] == 'X') {
        r.at++;
        end(std::string("ERROR ") + name + "() returned a value of type " + r.bytes() + ", which passk cannot compare");
    }
    Reader probe = r;
    skip(probe);
    if (probe.at != probe.size) throw Malformed("trailing bytes");
    return Codec<std::decay_t<R>>::decode(r);
}

template <class R, class... A>
R call(const char* name, const A&... args) {
    check_unasked("before a call");
    Writer w;
    w.byte('C');
    w.bytes(name, std::strlen(name));
    w.u32(sizeof...(A));
    (Codec<std::decay_t<A>>::encode(w, args), ...);
    if (!send(CALLS, w.buffer)) end("ENDED");
    std::string reply;
    try {
        if (!receive(REPLIES, reply)) end("ENDED");
        Reader r{reinterpret_cast<const unsigned char*>(reply.data()), reply.size()};
        char kind = static_cast<char>(r.byte());
        if (kind == 'E') {
            std::string type = r.bytes(), message = r.bytes();
            if (r.at != r.size) throw Malformed("trailing bytes");
            end("RAISED " + type + ": " + message);
        }
        if (kind == 'U') {
            std::string type = r.bytes();
            if (r.at != r.size) throw Malformed("trailing bytes");
            end(std::string("ERROR ") + name + "() returned a value of type " + type + ", which passk cannot compare");
        }
        if (kind != 'R') throw Malformed("not an answer");
        if constexpr (std::is_void_v<R>) {
            r.expect('n');
            if (r.at != r.size) throw Malformed("trailing bytes");
            return;
        } else {
            return returned<R>(r, name);
        }
    } catch (const Malformed& bad) {
        end(std::string("BROKEN ") + name + "(): " + bad.what());
    }
}

// After the tests returned: the only way to a pass.
[[noreturn]] inline void pass() {
    check_unasked("after its last answer");
    std::fflush(stdout);
    std::fflush(stderr);
    write_all(REPORT, "PASS", 4);
    std::_Exit(0);
}

}  // namespace judge

// ---------------------------------------------------------------- the candidate's side

namespace server {

constexpr int CALLS = 3, REPLIES = 4;

struct Entry {
    const char* name;
    void (*serve)(Reader&, Writer&);
};

template <class F>
struct Call;

template <class R, class... A>
struct Call<R (*)(A...)> {
    template <R (*F)(A...)>
    static void serve(Reader& r, Writer& w) {
        if (r.u32() != sizeof...(A)) throw Malformed("a call with another number of arguments");
        std::tuple<std::decay_t<A>...> args{Codec<std::decay_t<A>>::decode(r)...};
        if (r.at != r.size) throw Malformed("trailing bytes");
        if constexpr (std::is_void_v<R>) {
            std::apply(F, args);
            w.byte('R');
            w.byte('n');
        } else {
            Writer value;
            Codec<std::decay_t<R>>::encode(value, std::apply(F, args));
            w.byte('R');
            w.buffer += value.buffer;
        }
    }
};

inline void raised(Writer& w, const std::string& type, const std::string& message) {
    w.buffer.clear();
    w.byte('E');
    w.bytes(type.data(), type.size());
    w.bytes(message.data(), message.size());
}

inline int serve(std::initializer_list<Entry> entries) {
    std::string message;
    while (true) {
        try {
            if (!receive(CALLS, message)) return 0;
        } catch (const Malformed&) {
            return 0;
        }
        Reader r{reinterpret_cast<const unsigned char*>(message.data()), message.size()};
        Writer w;
        try {
            if (static_cast<char>(r.byte()) != 'C') return 1;
            std::string name = r.bytes();
            const Entry* entry = nullptr;
            for (const Entry& e : entries) if (name == e.name) entry = &e;
            if (entry == nullptr) return 1;
            entry->serve(r, w);
        } catch (const Malformed&) {
            return 1;
        } catch (const std::bad_alloc& e) {
            raised(w, "std::bad_alloc", e.what());
        } catch (const std::exception& e) {
            raised(w, type_name(typeid(e)), e.what());
        } catch (...) {
            const std::type_info* held = abi::__cxa_current_exception_type();
            raised(w, held ? type_name(*held) : "unknown", "");
        }
        if (!send(REPLIES, w.buffer)) return 0;
    }
}

}  // namespace server
}  // namespace passk
