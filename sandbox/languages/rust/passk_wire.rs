//! The value wire (sandbox/runtime/values.py has the rule) in Rust: the codec, the judge's call and the
//! candidate's server. Compiled once into the Rust image as an rlib (`--extern passk_wire=...`), so neither
//! the model's code nor its macros ever reach it; the judge's stubs and the candidate's generated dispatch
//! (sandbox/languages/rust.py) only name its items by absolute paths.
//!
//! A value is rebuilt as the Rust type the prompt's signature names: `Decode` is implemented for exactly the
//! types the wire carries, and refuses any other tag (`Refused::Malformed`), or a value the sender could not
//! carry (`X`, `Refused::Unsendable`). Integers cross at their width (`isize` / `usize` as 64 bits), floats
//! by their bits, `String` / `&str` as UTF-8, `Vec`, slices and arrays as sequences, tuples as tuples,
//! `HashMap` / `BTreeMap` in the sender's iteration order, `Option` as N / Y, `()` as null, and
//! `Box<dyn Any>` / `&dyn Any` as `a` with the name of the type held, from a fixed list (`dynamic_types!`
//! below): any other held type is a value the wire cannot carry.
//!
//! Decoded `&str` values (a signature's `Vec<&str>`, a returned `&str`) are leaked: both processes are
//! short-lived and the tests' values are small.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fs::File;
use std::hash::{BuildHasher, Hash};
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::unix::io::FromRawFd;

/// Deeper nesting is not carried (values.py's MAX_DEPTH).
pub const MAX_DEPTH: u32 = 100;
/// The largest message a receiver reads.
pub const MAX_MESSAGE: usize = 1 << 30;

/// Why bytes are not the value the receiver expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not a well-formed value of the expected type (or not a well-formed message).
    Malformed(String),
    /// The sender had a value of a type the wire cannot carry (an `X` value), by name.
    Unsendable(String),
}

fn malformed<T>(why: impl Into<String>) -> Result<T, Refused> {
    Err(Refused::Malformed(why.into()))
}

// ---------------------------------------------------------------- bytes

/// An encoded value or message being built. Once it holds a value the wire cannot carry (`unsendable`), its
/// bytes are never sent: the judge reports an error, the server sends `U`.
#[derive(Default)]
pub struct Writer {
    buf: Vec<u8>,
    depth: u32,
    unsendable: Option<String>,
}

impl Writer {
    pub fn new() -> Writer {
        Writer::default()
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// The first value written that the wire cannot carry, if any (it was written as `X`).
    pub fn unsendable(&self) -> Option<&str> {
        self.unsendable.as_deref()
    }

    pub fn byte(&mut self, byte: u8) {
        self.buf.push(byte);
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    pub fn u32(&mut self, value: u32) {
        self.raw(&value.to_be_bytes());
    }

    /// A <string>: its length, then its bytes.
    pub fn string(&mut self, bytes: &[u8]) {
        self.count(bytes.len());
        self.raw(bytes);
    }

    /// A length or a count as <u32> (more than 4G elements cannot be sent: the value is refused).
    pub fn count(&mut self, n: usize) {
        match u32::try_from(n) {
            Ok(n) => self.u32(n),
            Err(_) => {
                self.refuse("a value of more than 4294967295 elements");
                self.u32(0);
            }
        }
    }

    /// `X <what>`: a value of a type the wire cannot carry, noted as the writer's first such value.
    pub fn refuse(&mut self, what: &str) {
        if self.unsendable.is_none() {
            self.unsendable = Some(what.to_string());
        }
        self.byte(b'X');
        self.string(what.as_bytes());
    }

    /// Writes a container's tag and contents one level deeper (beyond MAX_DEPTH: X "deeply nested value").
    fn nested(&mut self, tag: u8, contents: impl FnOnce(&mut Writer)) {
        if self.depth >= MAX_DEPTH {
            self.refuse("deeply nested value");
            return;
        }
        self.depth += 1;
        self.byte(tag);
        contents(self);
        self.depth -= 1;
    }
}

/// A received value or message being read.
pub struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    depth: u32,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, at: 0, depth: 0 }
    }

    fn remaining(&self) -> usize {
        self.data.len() - self.at
    }

    pub fn byte(&mut self) -> Result<u8, Refused> {
        Ok(self.take(1)?[0])
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Refused> {
        if n > self.remaining() {
            return malformed("truncated");
        }
        let chunk = &self.data[self.at..self.at + n];
        self.at += n;
        Ok(chunk)
    }

    pub fn u32(&mut self) -> Result<u32, Refused> {
        let bytes = self.take(4)?;
        Ok(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// A count of elements: each takes a byte at least, so no count exceeds what is left of the message.
    pub fn count(&mut self) -> Result<usize, Refused> {
        let n = self.u32()? as usize;
        if n > self.remaining() {
            return malformed("a count larger than the message");
        }
        Ok(n)
    }

    pub fn string(&mut self) -> Result<&'a [u8], Refused> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    /// A value's tag; an `X` value is refused as unsendable, with the type it names.
    pub fn tag(&mut self) -> Result<u8, Refused> {
        let tag = self.byte()?;
        if tag == b'X' {
            let name = self.string()?;
            return Err(Refused::Unsendable(String::from_utf8_lossy(name).into_owned()));
        }
        Ok(tag)
    }

    pub fn expect(&mut self, wanted: u8) -> Result<(), Refused> {
        let tag = self.tag()?;
        if tag != wanted {
            return malformed(format!("a value tagged {:?} where the signature's type is tagged {:?}",
                                     tag as char, wanted as char));
        }
        Ok(())
    }

    /// Nothing may follow the value or message.
    pub fn finish(&self) -> Result<(), Refused> {
        if self.remaining() != 0 {
            return malformed("trailing bytes");
        }
        Ok(())
    }

    /// Reads a container's contents one level deeper (beyond MAX_DEPTH: refused).
    fn nested<T>(&mut self, contents: impl FnOnce(&mut Reader<'a>) -> Result<T, Refused>) -> Result<T, Refused> {
        if self.depth >= MAX_DEPTH {
            return malformed("nested too deeply");
        }
        self.depth += 1;
        let value = contents(self);
        self.depth -= 1;
        value
    }
}

/// A value the wire carries, written by its static type.
pub trait Encode {
    fn encode(&self, w: &mut Writer);
}

/// A value the wire carries, rebuilt as its static type from what the other process sent.
pub trait Decode: Sized {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused>;
}

/// The one value `data` holds, as `T` (refused if it holds anything else).
pub fn decode_value<T: Decode>(data: &[u8]) -> Result<T, Refused> {
    let mut r = Reader::new(data);
    let value = T::decode(&mut r)?;
    r.finish()?;
    Ok(value)
}

/// The bytes of one value (`X` where it holds a value the wire cannot carry).
pub fn encode_value<T: Encode + ?Sized>(value: &T) -> Vec<u8> {
    let mut w = Writer::new();
    value.encode(&mut w);
    w.into_bytes()
}

// ---------------------------------------------------------------- scalars

macro_rules! integers {
    ($($t:ty => $tag:expr),* $(,)?) => {$(
        impl Encode for $t {
            fn encode(&self, w: &mut Writer) {
                w.byte($tag);
                w.raw(&self.to_be_bytes());
            }
        }
        impl Decode for $t {
            fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
                r.expect($tag)?;
                let bytes = r.take(::std::mem::size_of::<$t>())?;
                Ok(<$t>::from_be_bytes(bytes.try_into().expect("sized")))
            }
        }
    )*};
}

integers!(i8 => b'b', i16 => b'h', i32 => b'i', i64 => b'l', u8 => b'B', u16 => b'H', u32 => b'I', u64 => b'L');

// Pointer-sized integers cross at 64 bits (`l` / `L`).
impl Encode for isize {
    fn encode(&self, w: &mut Writer) {
        (*self as i64).encode(w);
    }
}

impl Decode for isize {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        isize::try_from(i64::decode(r)?).or_else(|_| malformed("an integer out of isize's range"))
    }
}

impl Encode for usize {
    fn encode(&self, w: &mut Writer) {
        (*self as u64).encode(w);
    }
}

impl Decode for usize {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        usize::try_from(u64::decode(r)?).or_else(|_| malformed("an integer out of usize's range"))
    }
}

// 128-bit integers cross as `z`: two's complement in (bit length of the magnitude + 8) / 8 bytes, as
// values.py writes it (zero: no bytes). `wide` is the value sign-extended to 136 bits.
fn encode_big(w: &mut Writer, magnitude: u128, wide: [u8; 17]) {
    w.byte(b'z');
    let bits = 128 - magnitude.leading_zeros() as usize;
    let size = if magnitude == 0 { 0 } else { (bits + 8) / 8 };
    w.string(&wide[17 - size..]);
}

// The value sign-extended to 136 bits (refused if it does not fit them).
fn decode_big(r: &mut Reader<'_>) -> Result<[u8; 17], Refused> {
    r.expect(b'z')?;
    let mut bytes = r.string()?;
    let fill = match bytes.first() {
        Some(first) if first & 0x80 != 0 => 0xff,
        _ => 0,
    };
    while bytes.len() > 17 && bytes[0] == fill {
        bytes = &bytes[1..];
    }
    if bytes.len() > 17 {
        return malformed("an integer wider than 128 bits");
    }
    let mut wide = [fill; 17];
    wide[17 - bytes.len()..].copy_from_slice(bytes);
    Ok(wide)
}

impl Encode for i128 {
    fn encode(&self, w: &mut Writer) {
        let mut wide = [if *self < 0 { 0xff } else { 0 }; 17];
        wide[1..].copy_from_slice(&self.to_be_bytes());
        encode_big(w, self.unsigned_abs(), wide);
    }
}

impl Decode for i128 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let wide = decode_big(r)?;
        if wide[0] != if wide[1] & 0x80 != 0 { 0xff } else { 0 } {
            return malformed("an integer out of i128's range");
        }
        Ok(i128::from_be_bytes(wide[1..].try_into().expect("sized")))
    }
}

impl Encode for u128 {
    fn encode(&self, w: &mut Writer) {
        let mut wide = [0; 17];
        wide[1..].copy_from_slice(&self.to_be_bytes());
        encode_big(w, *self, wide);
    }
}

impl Decode for u128 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let wide = decode_big(r)?;
        if wide[0] != 0 {
            return malformed("an integer out of u128's range");
        }
        Ok(u128::from_be_bytes(wide[1..].try_into().expect("sized")))
    }
}

impl Encode for f32 {
    fn encode(&self, w: &mut Writer) {
        w.byte(b'f');
        w.u32(self.to_bits());
    }
}

impl Decode for f32 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        r.expect(b'f')?;
        Ok(f32::from_bits(r.u32()?))
    }
}

impl Encode for f64 {
    fn encode(&self, w: &mut Writer) {
        w.byte(b'd');
        w.raw(&self.to_bits().to_be_bytes());
    }
}

impl Decode for f64 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        r.expect(b'd')?;
        let bytes = r.take(8)?;
        Ok(f64::from_bits(u64::from_be_bytes(bytes.try_into().expect("sized"))))
    }
}

impl Encode for bool {
    fn encode(&self, w: &mut Writer) {
        w.byte(if *self { b'T' } else { b'F' });
    }
}

impl Decode for bool {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        match r.tag()? {
            b'T' => Ok(true),
            b'F' => Ok(false),
            tag => malformed(format!("a value tagged {:?} where the signature has a bool", tag as char)),
        }
    }
}

impl Encode for char {
    fn encode(&self, w: &mut Writer) {
        w.byte(b'c');
        w.u32(*self as u32);
    }
}

impl Decode for char {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        r.expect(b'c')?;
        char::from_u32(r.u32()?).map_or_else(|| malformed("a char that is not a Unicode scalar value"), Ok)
    }
}

/// `()` crosses as null (what a function without a return type returns).
impl Encode for () {
    fn encode(&self, w: &mut Writer) {
        w.byte(b'n');
    }
}

impl Decode for () {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        r.expect(b'n')
    }
}

// ---------------------------------------------------------------- strings

impl Encode for str {
    fn encode(&self, w: &mut Writer) {
        w.byte(b's');
        w.string(self.as_bytes());
    }
}

impl Encode for String {
    fn encode(&self, w: &mut Writer) {
        self.as_str().encode(w);
    }
}

impl Decode for String {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        r.expect(b's')?;
        let bytes = r.string()?;
        String::from_utf8(bytes.to_vec()).or_else(|_| malformed("a string that is not UTF-8"))
    }
}

/// A borrowed string is rebuilt as a leaked one (valid for any lifetime the signature names).
impl<'a> Decode for &'a str {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        Ok(Box::leak(String::decode(r)?.into_boxed_str()))
    }
}

// ---------------------------------------------------------------- references and boxes

impl<T: Encode + ?Sized> Encode for &T {
    fn encode(&self, w: &mut Writer) {
        (**self).encode(w);
    }
}

impl<T: Encode + ?Sized> Encode for &mut T {
    fn encode(&self, w: &mut Writer) {
        (**self).encode(w);
    }
}

impl<T: Encode + ?Sized> Encode for Box<T> {
    fn encode(&self, w: &mut Writer) {
        (**self).encode(w);
    }
}

impl<T: Decode> Decode for Box<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        Ok(Box::new(T::decode(r)?))
    }
}

// ---------------------------------------------------------------- containers

fn encode_sequence<'v, T: Encode + 'v>(w: &mut Writer, tag: u8, len: usize, items: impl Iterator<Item = &'v T>) {
    w.nested(tag, |w| {
        w.count(len);
        for item in items {
            item.encode(w);
        }
    });
}

fn decode_sequence<T: Decode>(r: &mut Reader<'_>, tag: u8, mut push: impl FnMut(T)) -> Result<(), Refused> {
    r.expect(tag)?;
    r.nested(|r| {
        for _ in 0..r.count()? {
            push(T::decode(r)?);
        }
        Ok(())
    })
}

impl<T: Encode> Encode for [T] {
    fn encode(&self, w: &mut Writer) {
        encode_sequence(w, b'A', self.len(), self.iter());
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, w: &mut Writer) {
        self.as_slice().encode(w);
    }
}

impl<T: Decode> Decode for Vec<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let mut out = Vec::new();
        decode_sequence(r, b'A', |item| out.push(item))?;
        Ok(out)
    }
}

impl<T: Encode> Encode for VecDeque<T> {
    fn encode(&self, w: &mut Writer) {
        encode_sequence(w, b'A', self.len(), self.iter());
    }
}

impl<T: Decode> Decode for VecDeque<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let mut out = VecDeque::new();
        decode_sequence(r, b'A', |item| out.push_back(item))?;
        Ok(out)
    }
}

impl<T: Encode, const N: usize> Encode for [T; N] {
    fn encode(&self, w: &mut Writer) {
        self.as_slice().encode(w);
    }
}

impl<T: Decode, const N: usize> Decode for [T; N] {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let items = Vec::<T>::decode(r)?;
        items.try_into().or_else(|_| malformed(format!("a sequence of another length than the signature's {}", N)))
    }
}

impl<T: Encode + Eq + Hash, S: BuildHasher> Encode for HashSet<T, S> {
    fn encode(&self, w: &mut Writer) {
        encode_sequence(w, b'S', self.len(), self.iter());
    }
}

impl<T: Decode + Eq + Hash, S: BuildHasher + Default> Decode for HashSet<T, S> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let mut out = HashSet::default();
        decode_sequence(r, b'S', |item| {
            out.insert(item);
        })?;
        Ok(out)
    }
}

impl<T: Encode + Ord> Encode for BTreeSet<T> {
    fn encode(&self, w: &mut Writer) {
        encode_sequence(w, b'S', self.len(), self.iter());
    }
}

impl<T: Decode + Ord> Decode for BTreeSet<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let mut out = BTreeSet::new();
        decode_sequence(r, b'S', |item| {
            out.insert(item);
        })?;
        Ok(out)
    }
}

fn encode_map<'v, K: Encode + 'v, V: Encode + 'v>(w: &mut Writer, len: usize, pairs: impl Iterator<Item = (&'v K, &'v V)>) {
    w.nested(b'M', |w| {
        w.count(len);
        for (key, value) in pairs {
            key.encode(w);
            value.encode(w);
        }
    });
}

// A key sent twice keeps its last value (as the map the sender built would).
fn decode_map<K: Decode, V: Decode>(r: &mut Reader<'_>, mut insert: impl FnMut(K, V)) -> Result<(), Refused> {
    r.expect(b'M')?;
    r.nested(|r| {
        for _ in 0..r.count()? {
            let key = K::decode(r)?;
            let value = V::decode(r)?;
            insert(key, value);
        }
        Ok(())
    })
}

impl<K: Encode + Eq + Hash, V: Encode, S: BuildHasher> Encode for HashMap<K, V, S> {
    fn encode(&self, w: &mut Writer) {
        encode_map(w, self.len(), self.iter());
    }
}

impl<K: Decode + Eq + Hash, V: Decode, S: BuildHasher + Default> Decode for HashMap<K, V, S> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let mut out = HashMap::default();
        decode_map(r, |key, value| {
            out.insert(key, value);
        })?;
        Ok(out)
    }
}

impl<K: Encode + Ord, V: Encode> Encode for BTreeMap<K, V> {
    fn encode(&self, w: &mut Writer) {
        encode_map(w, self.len(), self.iter());
    }
}

impl<K: Decode + Ord, V: Decode> Decode for BTreeMap<K, V> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        let mut out = BTreeMap::new();
        decode_map(r, |key, value| {
            out.insert(key, value);
        })?;
        Ok(out)
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, w: &mut Writer) {
        match self {
            None => w.byte(b'N'),
            Some(value) => w.nested(b'Y', |w| value.encode(w)),
        }
    }
}

impl<T: Decode> Decode for Option<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        match r.tag()? {
            b'N' => Ok(None),
            b'Y' => r.nested(|r| Ok(Some(T::decode(r)?))),
            tag => malformed(format!("a value tagged {:?} where the signature has an Option", tag as char)),
        }
    }
}

macro_rules! tuples {
    ($($n:expr => ($($t:ident $v:ident),+);)*) => {$(
        impl<$($t: Encode),+> Encode for ($($t,)+) {
            fn encode(&self, w: &mut Writer) {
                let ($($v,)+) = self;
                w.nested(b'P', |w| {
                    w.u32($n);
                    $($v.encode(w);)+
                });
            }
        }
        impl<$($t: Decode),+> Decode for ($($t,)+) {
            fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
                r.expect(b'P')?;
                r.nested(|r| {
                    if r.u32()? != $n {
                        return malformed("a tuple of another size than the signature's");
                    }
                    // Struct expressions evaluate their fields in order: left to right, as sent.
                    Ok(($($t::decode(r)?,)+))
                })
            }
        }
    )*};
}

tuples! {
    1 => (A a);
    2 => (A a, B b);
    3 => (A a, B b, C c);
    4 => (A a, B b, C c, D d);
    5 => (A a, B b, C c, D d, E e);
    6 => (A a, B b, C c, D d, E e, F f);
    7 => (A a, B b, C c, D d, E e, F f, G g);
    8 => (A a, B b, C c, D d, E e, F f, G g, H h);
}

// ---------------------------------------------------------------- dynamic values (Box<dyn Any>, &dyn Any)

// The types a `dyn Any` may hold on the wire, with their names there (Rust's own notation). Nothing else is
// rebuilt: a name outside this list is refused, whatever the sender calls it.
macro_rules! dynamic_types {
    ($callback:ident!($($arg:tt)*)) => {
        $callback!($($arg)*;
            i8 => "i8", i16 => "i16", i32 => "i32", i64 => "i64", i128 => "i128", isize => "isize",
            u8 => "u8", u16 => "u16", u32 => "u32", u64 => "u64", u128 => "u128", usize => "usize",
            f32 => "f32", f64 => "f64", bool => "bool", char => "char", () => "()",
            String => "String", &'static str => "&str",
            Vec<Box<dyn Any>> => "Vec<Box<dyn Any>>",
            Vec<i32> => "Vec<i32>", Vec<i64> => "Vec<i64>", Vec<isize> => "Vec<isize>", Vec<f32> => "Vec<f32>",
            Vec<f64> => "Vec<f64>", Vec<String> => "Vec<String>", Vec<&'static str> => "Vec<&str>",
            Option<i32> => "Option<i32>", Option<String> => "Option<String>"
        )
    };
}

macro_rules! encode_dynamic {
    ($value:expr, $w:expr; $($t:ty => $name:expr),* $(,)?) => {{
        let (value, w): (&dyn Any, &mut Writer) = ($value, $w);
        $(
            if let Some(held) = value.downcast_ref::<$t>() {
                w.nested(b'a', |w| {
                    w.string($name.as_bytes());
                    held.encode(w);
                });
                return;
            }
        )*
        w.refuse("a dyn Any holding a type passk does not carry");
    }};
}

fn encode_any(value: &dyn Any, w: &mut Writer) {
    dynamic_types!(encode_dynamic!(value, w))
}

impl Encode for dyn Any {
    fn encode(&self, w: &mut Writer) {
        encode_any(self, w);
    }
}

impl Encode for dyn Any + Send {
    fn encode(&self, w: &mut Writer) {
        encode_any(self, w);
    }
}

macro_rules! decode_dynamic {
    ($name:expr, $r:expr; $($t:ty => $wire:expr),* $(,)?) => {{
        let (name, r): (&[u8], &mut Reader<'_>) = ($name, $r);
        $(
            if name == $wire.as_bytes() {
                let value: Box<dyn Any> = Box::new(<$t as Decode>::decode(r)?);
                return Ok(value);
            }
        )*
        malformed(format!("a dyn Any of a type passk does not rebuild: {:?}", String::from_utf8_lossy(name)))
    }};
}

fn decode_any(r: &mut Reader<'_>) -> Result<Box<dyn Any>, Refused> {
    r.expect(b'a')?;
    r.nested(|r| {
        let name = r.string()?;
        dynamic_types!(decode_dynamic!(name, r))
    })
}

impl Decode for Box<dyn Any> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, Refused> {
        decode_any(r)
    }
}

// ---------------------------------------------------------------- enums of the prompts' own types

// A variant of an enum a signature names (HumanEval-X's Rust/137 returns its RtnType) crosses as a dynamic
// value: `a "<Enum>::<Variant>" P <its fields>`. The impls are generated beside the enum's definition.

/// Writes one variant with its fields.
pub fn encode_variant(w: &mut Writer, variant: &str, fields: &[&dyn Encode]) {
    w.nested(b'a', |w| {
        w.string(variant.as_bytes());
        w.nested(b'P', |w| {
            w.count(fields.len());
            for field in fields {
                field.encode(w);
            }
        });
    });
}

/// Reads a variant's name and field count, then its fields with `fields(name, count, reader)`.
pub fn decode_variant<T>(r: &mut Reader<'_>, fields: impl FnOnce(&str, u32, &mut Reader<'_>) -> Result<T, Refused>)
                         -> Result<T, Refused> {
    r.expect(b'a')?;
    r.nested(|r| {
        let name = String::from_utf8_lossy(r.string()?).into_owned();
        r.expect(b'P')?;
        r.nested(|r| {
            let count = r.u32()?;
            fields(&name, count, r)
        })
    })
}

/// A variant the receiver's enum does not have (or with other fields).
pub fn unknown_variant<T>(variant: &str) -> Result<T, Refused> {
    malformed(format!("a variant the signature's enum does not have: {variant:?}"))
}

// ---------------------------------------------------------------- framing on descriptors

fn descriptor(fd: i32) -> ManuallyDrop<File> {
    // Borrowed, never closed here: the descriptor was placed by PID 1 (sandbox/runtime/native.py).
    ManuallyDrop::new(unsafe { File::from_raw_fd(fd) })
}

/// Sends one framed message; false when the other side is gone (Rust ignores SIGPIPE: a write fails instead).
pub fn send(fd: i32, message: &[u8]) -> bool {
    let mut framed = Vec::with_capacity(message.len() + 4);
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(message);
    let mut file = descriptor(fd);
    file.write_all(&framed).and_then(|_| file.flush()).is_ok()
}

/// One framed message; None on a clean end of input before its first byte; refused when cut short.
pub fn receive(fd: i32) -> Result<Option<Vec<u8>>, Refused> {
    let file = descriptor(fd);
    let mut header = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match (&*file).read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return malformed("a message cut short"),
            Ok(n) => got += n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) if got == 0 => return Ok(None),
            Err(_) => return malformed("a message cut short"),
        }
    }
    let size = u32::from_be_bytes(header) as usize;
    if size > MAX_MESSAGE {
        return malformed("a message over 1 GiB");
    }
    // Grows with what arrives: a header alone reserves nothing.
    let mut message = Vec::new();
    (&*file).take(size as u64).read_to_end(&mut message).or_else(|_| malformed("a message cut short"))?;
    if message.len() != size {
        return malformed("a message cut short");
    }
    Ok(Some(message))
}

#[repr(C)]
struct PollFd {
    fd: i32,
    events: i16,
    revents: i16,
}

extern "C" {
    fn poll(fds: *mut PollFd, nfds: u64, timeout: i32) -> i32;
}

/// Whether bytes are waiting on `fd` now.
fn waiting(fd: i32) -> bool {
    const POLLIN: i16 = 1;
    let mut entry = PollFd { fd, events: POLLIN, revents: 0 };
    let ready = unsafe { poll(&mut entry, 1, 0) };
    ready > 0 && entry.revents & POLLIN != 0
}

// ---------------------------------------------------------------- the judge's side

/// The judge: its stubs send calls to the candidate's process and return what comes back; it reports on
/// descriptor 3 (sandbox/runtime/report.py), which no candidate process holds.
pub mod judge {
    use super::*;

    const REPORT: i32 = 3;
    const CALLS: i32 = 4;
    const REPLIES: i32 = 5;

    /// Writes the judge's one outcome record and ends its process (the tests end there).
    pub fn end(record: &str) -> ! {
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        let _ = descriptor(REPORT).write_all(record.as_bytes());
        std::process::exit(1)
    }

    // Anything waiting on the reply channel when no call is pending was sent unasked.
    fn check_unasked(moment: &str) {
        if waiting(REPLIES) {
            end(&format!("FLAG out_of_turn\nBROKEN the program's process wrote on its channel to the tests \
                          unasked, {moment}"));
        }
    }

    /// Calls the candidate's function `name` with `args`; returns its value rebuilt as `R`.
    pub fn call<R: Decode>(name: &str, args: &[&dyn Encode]) -> R {
        check_unasked(&format!("before the call of {name}()"));
        let mut w = Writer::new();
        w.byte(b'C');
        w.string(name.as_bytes());
        w.count(args.len());
        for arg in args {
            arg.encode(&mut w);
        }
        if let Some(what) = w.unsendable() {
            end(&format!("ERROR the tests call {name}() with {what}, which passk cannot carry to the program"));
        }
        if !send(CALLS, w.bytes()) {
            end("ENDED");
        }
        let reply = match receive(REPLIES) {
            Ok(Some(reply)) => reply,
            Ok(None) => end("ENDED"),
            Err(Refused::Malformed(why)) | Err(Refused::Unsendable(why)) => end(&format!("BROKEN {name}(): {why}")),
        };
        match answer(&reply) {
            Ok(value) => value,
            Err(Outcome::Raised(class, message)) => end(&format!("RAISED {class}: {message}")),
            Err(Outcome::Refused(Refused::Unsendable(what))) => end(&format!(
                "ERROR {name}() returned a value passk cannot carry to the tests ({what})")),
            Err(Outcome::Refused(Refused::Malformed(why))) => end(&format!("BROKEN {name}(): {why}")),
        }
    }

    enum Outcome {
        Raised(String, String),
        Refused(Refused),
    }

    fn answer<R: Decode>(reply: &[u8]) -> Result<R, Outcome> {
        let mut r = Reader::new(reply);
        let refused = Outcome::Refused;
        match r.byte().map_err(refused)? {
            b'R' => {
                let value = R::decode(&mut r).map_err(refused)?;
                r.finish().map_err(refused)?;
                Ok(value)
            }
            b'E' => {
                let class = String::from_utf8_lossy(r.string().map_err(refused)?).into_owned();
                let message = String::from_utf8_lossy(r.string().map_err(refused)?).into_owned();
                r.finish().map_err(refused)?;
                Err(Outcome::Raised(class, message))
            }
            b'U' => {
                let what = String::from_utf8_lossy(r.string().map_err(refused)?).into_owned();
                r.finish().map_err(refused)?;
                Err(refused(Refused::Unsendable(what)))
            }
            kind => Err(refused(Refused::Malformed(format!("not an answer (a message of kind {:?})", kind as char)))),
        }
    }

    /// After the tests returned: the only way to a pass.
    pub fn pass() -> ! {
        check_unasked("after the last answer");
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        if descriptor(REPORT).write_all(b"PASS").is_err() {
            std::process::exit(1);
        }
        std::process::exit(0)
    }

    /// The judge of a problem whose own tests do not compile (rustc's short diagnostics in `log`): every
    /// sample ends as an error saying so, as every sample failed to build under the original harness.
    pub fn tests_do_not_compile(log: &str) -> ! {
        let first = log.lines().find(|line| line.contains("error")).unwrap_or("(no diagnostic)");
        end(&format!("ERROR the problem's tests do not compile with this toolchain: {first}"))
    }
}

// ---------------------------------------------------------------- the candidate's side

/// The candidate's server: reads calls on descriptor 3, calls the function named, answers on descriptor 4.
/// Its dispatch (one function per callable, decoding the arguments and calling the real function) is
/// generated into the candidate's program by sandbox/languages/rust.py.
pub mod server {
    use super::*;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    const CALLS: i32 = 3;
    const REPLIES: i32 = 4;

    /// One callable: reads a call's arguments, returns the reply message.
    pub type Serve = fn(&mut Reader<'_>) -> Result<Vec<u8>, Refused>;

    /// The call must carry exactly `n` arguments.
    pub fn arguments(r: &mut Reader<'_>, n: u32) -> Result<(), Refused> {
        if r.u32()? != n {
            return malformed("a call with another number of arguments");
        }
        Ok(())
    }

    /// `R <value>`, or `U <type>` when the value holds one the wire cannot carry.
    pub fn returned<T: Encode + ?Sized>(value: &T) -> Vec<u8> {
        let mut w = Writer::new();
        w.byte(b'R');
        value.encode(&mut w);
        match w.unsendable() {
            None => w.into_bytes(),
            Some(what) => {
                let mut u = Writer::new();
                u.byte(b'U');
                u.string(what.as_bytes());
                u.into_bytes()
            }
        }
    }

    /// Runs the call; a panic crosses as `E "panic" <its message>` (the judge ends there, as the tests would).
    pub fn answer(call: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
        match catch_unwind(AssertUnwindSafe(call)) {
            Ok(reply) => reply,
            Err(payload) => {
                let message = if let Some(text) = payload.downcast_ref::<&str>() {
                    text.to_string()
                } else if let Some(text) = payload.downcast_ref::<String>() {
                    text.clone()
                } else {
                    "Box<dyn Any>".to_string()
                };
                let mut w = Writer::new();
                w.byte(b'E');
                w.string(b"panic");
                w.string(message.as_bytes());
                w.into_bytes()
            }
        }
    }

    /// Answers calls until the judge closes its end (then the process ends with status 0).
    pub fn serve(callables: &[(&str, Serve)]) {
        loop {
            let message = match receive(CALLS) {
                Ok(Some(message)) => message,
                Ok(None) | Err(_) => std::process::exit(0),
            };
            let mut r = Reader::new(&message);
            let reply = (|| {
                if r.byte()? != b'C' {
                    return malformed("not a call");
                }
                let name = r.string()?;
                match callables.iter().find(|(callable, _)| callable.as_bytes() == name) {
                    Some((_, serve)) => serve(&mut r),
                    None => malformed("a call of a function the program does not serve"),
                }
            })();
            match reply {
                Ok(reply) => {
                    if !send(REPLIES, &reply) {
                        std::process::exit(0);
                    }
                }
                // Only passk's judge writes calls: one it cannot read is passk's fault, not the program's.
                Err(why) => {
                    eprintln!("passk: the server could not read a call: {why:?}");
                    std::process::exit(70);
                }
            }
        }
    }
}
