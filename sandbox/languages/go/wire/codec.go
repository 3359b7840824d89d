// Package wire is passk's value wire in Go (sandbox/runtime/values.py has the rule): the codec, the judge's
// side (Call, Main: judge.go) and the candidate's server (Serve: server.go). It is compiled once into the Go
// image (passk/wire, listed in the image's importcfg), so a judge or a candidate only links it: nothing in
// the model's code is compiled with it, and no name the model's package declares reaches it.
//
// Values are carried by their static Go type, with reflect: the sender encodes a value as the type the
// signature gives it, the receiver rebuilds exactly that type and refuses any other tag. Go's types map to
// the tags as follows:
//
//	bool                          F T
//	int8 int16 int32(rune) int64  b h i l       (int: l, uint: L, uintptr: L, on 64-bit platforms)
//	uint8(byte) ... uint64        B H I L
//	float32 float64               f d           (their IEEE 754 bits: NaN payloads and -0.0 kept)
//	string                        s             (its bytes, valid UTF-8 or not)
//	[]T  [N]T                     A             (a nil slice is n: reflect.DeepEqual tells nil from empty)
//	map[K]V                       M             (a nil map is n; pairs in Go's iteration order)
//	*T                            n, or the value it points to
//	interface{}                   a <type> <value>: the dynamic type by its Go name, from the fixed grammar
//	                              of types.go (never a type a program defined); a nil interface{} is a "" n
//
// Anything else (structs, funcs, channels, complex numbers, non-empty interfaces, a named type inside an
// interface{}) crosses as X <its Go name>: the judge then fails the sample as `error`, it never rebuilds it.
package wire

import (
	"fmt"
	"math"
	"math/bits"
	"reflect"
)

// MaxDepth is values.py's MAX_DEPTH: a value nested deeper is sent as X "deeply nested value", and a
// received one is refused.
const MaxDepth = 100

// MaxMessage is the largest message either side accepts.
const MaxMessage = 1 << 30

// Malformed: bytes that are not a well-formed value of the expected type (or not a well-formed message).
type Malformed string

func (m Malformed) Error() string { return string(m) }

// Uncarried: a value of a type the wire cannot carry, by the type's Go name (an X on the wire).
type Uncarried struct{ Type string }

func (u Uncarried) Error() string { return "a value of type " + u.Type + ", which the wire cannot carry" }

var intTags = map[reflect.Kind]byte{
	reflect.Int8: 'b', reflect.Int16: 'h', reflect.Int32: 'i', reflect.Int64: 'l',
	reflect.Uint8: 'B', reflect.Uint16: 'H', reflect.Uint32: 'I', reflect.Uint64: 'L',
}

func init() {
	if bits.UintSize == 64 {
		intTags[reflect.Int], intTags[reflect.Uint], intTags[reflect.Uintptr] = 'l', 'L', 'L'
	} else {
		intTags[reflect.Int], intTags[reflect.Uint], intTags[reflect.Uintptr] = 'i', 'I', 'I'
	}
}

func tagSize(tag byte) int {
	switch tag {
	case 'b', 'B':
		return 1
	case 'h', 'H':
		return 2
	case 'i', 'I':
		return 4
	}
	return 8
}

// ---------------------------------------------------------------- encoding

// Encoder appends values and message parts to Buf.
type Encoder struct {
	Buf []byte
	// The Go name of the first value written as X (a type the wire cannot carry), or "".
	Uncarried string
}

func (e *Encoder) Byte(b byte) { e.Buf = append(e.Buf, b) }

func (e *Encoder) U32(v uint32) {
	e.Buf = append(e.Buf, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func (e *Encoder) be(v uint64, size int) {
	for shift := 8 * (size - 1); shift >= 0; shift -= 8 {
		e.Buf = append(e.Buf, byte(v>>uint(shift)))
	}
}

// String writes a <string>: its length, then its bytes.
func (e *Encoder) String(s string) {
	e.U32(uint32(len(s)))
	e.Buf = append(e.Buf, s...)
}

func (e *Encoder) uncarried(name string) {
	if e.Uncarried == "" {
		e.Uncarried = name
	}
	e.Byte('X')
	e.String(name)
}

// Value writes v as its own (static) type; depth is the nesting level v is at (a message's reply is at 0,
// a call's arguments at 1, as values.py counts). A value whose parts would be deeper than MaxDepth is
// written as X "deeply nested value", at a depth the receiver still reads.
func (e *Encoder) Value(v reflect.Value, depth int) {
	t := v.Type()
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Interface:
		if depth >= MaxDepth {
			e.uncarried("deeply nested value")
			return
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		if v.Bool() {
			e.Byte('T')
		} else {
			e.Byte('F')
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		tag := intTags[t.Kind()]
		e.Byte(tag)
		e.be(uint64(v.Int()), tagSize(tag))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		tag := intTags[t.Kind()]
		e.Byte(tag)
		e.be(v.Uint(), tagSize(tag))
	case reflect.Float32:
		e.Byte('f')
		// Through Convert, not v.Float(): widening a float32 to float64 quietens a signalling NaN.
		e.U32(math.Float32bits(v.Convert(float32Type).Interface().(float32)))
	case reflect.Float64:
		e.Byte('d')
		e.be(math.Float64bits(v.Float()), 8)
	case reflect.String:
		e.Byte('s')
		e.String(v.String())
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && v.IsNil() {
			e.Byte('n')
			return
		}
		e.Byte('A')
		e.U32(uint32(v.Len()))
		for i := 0; i < v.Len(); i++ {
			e.Value(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			e.Byte('n')
			return
		}
		e.Byte('M')
		// The count written is the pairs iterated: a map a goroutine of the program changes meanwhile still
		// gives a well-formed message.
		at := len(e.Buf)
		e.U32(0)
		count := uint32(0)
		for it := v.MapRange(); it.Next(); count++ {
			e.Value(it.Key(), depth+1)
			e.Value(it.Value(), depth+1)
		}
		e.Buf[at], e.Buf[at+1], e.Buf[at+2], e.Buf[at+3] = byte(count>>24), byte(count>>16), byte(count>>8), byte(count)
	case reflect.Pointer:
		if v.IsNil() {
			e.Byte('n')
			return
		}
		e.Value(v.Elem(), depth)
	case reflect.Interface:
		if t.NumMethod() != 0 {
			e.uncarried(t.String())
			return
		}
		if v.IsNil() {
			e.Byte('a')
			e.String("")
			e.Byte('n')
			return
		}
		inner := v.Elem()
		name, ok := TypeName(inner.Type())
		if !ok {
			e.uncarried(inner.Type().String())
			return
		}
		e.Byte('a')
		e.String(name)
		e.Value(inner, depth+1)
	default:
		e.uncarried(t.String())
	}
}

// ---------------------------------------------------------------- decoding

// Decoder reads values and message parts from Data.
type Decoder struct {
	Data []byte
	At   int
}

func (d *Decoder) Byte() (byte, error) {
	if d.At >= len(d.Data) {
		return 0, Malformed("truncated")
	}
	d.At++
	return d.Data[d.At-1], nil
}

func (d *Decoder) be(size int) (uint64, error) {
	if len(d.Data)-d.At < size {
		return 0, Malformed("truncated")
	}
	v := uint64(0)
	for i := 0; i < size; i++ {
		v = v<<8 | uint64(d.Data[d.At+i])
	}
	d.At += size
	return v, nil
}

func (d *Decoder) U32() (uint32, error) {
	v, err := d.be(4)
	return uint32(v), err
}

// Count reads a number of elements: each takes one byte at least, so a count beyond the bytes left is a lie
// (refused before anything is allocated for it).
func (d *Decoder) Count() (int, error) {
	n, err := d.U32()
	if err == nil && int64(n) > int64(len(d.Data)-d.At) {
		err = Malformed("a count larger than the message")
	}
	return int(n), err
}

// room: a value of `size` bytes in memory may be made from what is left of the message. Every element of an
// array or a slice is encoded (one byte at least, a nil pointer), so a size beyond 16 bytes per byte left is
// a lie, refused before the memory for it is allocated.
func (d *Decoder) room(size uintptr) error {
	if size/16 > uintptr(len(d.Data)-d.At)+4 {
		return Malformed("a value larger than the message")
	}
	return nil
}

// String reads a <string>.
func (d *Decoder) String() (string, error) {
	n, err := d.U32()
	if err != nil {
		return "", err
	}
	if int64(n) > int64(len(d.Data)-d.At) {
		return "", Malformed("truncated")
	}
	s := string(d.Data[d.At : d.At+int(n)])
	d.At += int(n)
	return s, nil
}

// Done: nothing may follow the last value of a message.
func (d *Decoder) Done() error {
	if d.At != len(d.Data) {
		return Malformed("trailing bytes")
	}
	return nil
}

var wrongTag = Malformed("a value of another type than the signature's")

// Value reads one value as the type t (see Encoder.Value for depth). An X is returned as Uncarried, anything
// else that is not a value of type t as Malformed.
func (d *Decoder) Value(t reflect.Type, depth int) (out reflect.Value, err error) {
	defer func() {
		// reflect refuses what no check below foresaw (a map key whose dynamic type cannot be hashed):
		// a malformed value, never a crash of the receiver.
		if caught := recover(); caught != nil {
			out, err = reflect.Value{}, Malformed(fmt.Sprint("a value passk cannot rebuild: ", caught))
		}
	}()
	return d.value(t, depth)
}

func (d *Decoder) value(t reflect.Type, depth int) (reflect.Value, error) {
	if depth > MaxDepth {
		return reflect.Value{}, Malformed("nested too deeply")
	}
	tag, err := d.Byte()
	if err != nil {
		return reflect.Value{}, err
	}
	if tag == 'X' {
		name, err := d.String()
		if err != nil {
			return reflect.Value{}, err
		}
		return reflect.Value{}, Uncarried{name}
	}
	// Room for the value itself: an array type from an interface{}'s name may be large.
	if err := d.room(t.Size()); err != nil {
		return reflect.Value{}, err
	}
	out := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Bool:
		if tag != 'T' && tag != 'F' {
			return out, wrongTag
		}
		out.SetBool(tag == 'T')
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		want := intTags[t.Kind()]
		if tag != want {
			return out, wrongTag
		}
		size := tagSize(want)
		raw, err := d.be(size)
		if err != nil {
			return out, err
		}
		shift := uint(64 - 8*size) // sign-extend from the tag's width
		out.SetInt(int64(raw<<shift) >> shift)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		want := intTags[t.Kind()]
		if tag != want {
			return out, wrongTag
		}
		raw, err := d.be(tagSize(want))
		if err != nil {
			return out, err
		}
		out.SetUint(raw)
	case reflect.Float32:
		if tag != 'f' {
			return out, wrongTag
		}
		raw, err := d.U32()
		if err != nil {
			return out, err
		}
		// Through Convert, not SetFloat: a float64 round trip quietens a signalling NaN.
		out.Set(reflect.ValueOf(math.Float32frombits(raw)).Convert(t))
	case reflect.Float64:
		if tag != 'd' {
			return out, wrongTag
		}
		raw, err := d.be(8)
		if err != nil {
			return out, err
		}
		out.SetFloat(math.Float64frombits(raw))
	case reflect.String:
		if tag != 's' {
			return out, wrongTag
		}
		s, err := d.String()
		if err != nil {
			return out, err
		}
		out.SetString(s)
	case reflect.Slice:
		if tag == 'n' {
			return out, nil
		}
		if tag != 'A' {
			return out, wrongTag
		}
		n, err := d.Count()
		if err == nil {
			err = d.room(uintptr(n) * t.Elem().Size())
		}
		if err != nil {
			return out, err
		}
		out.Set(reflect.MakeSlice(t, n, n))
		for i := 0; i < n; i++ {
			item, err := d.value(t.Elem(), depth+1)
			if err != nil {
				return out, err
			}
			out.Index(i).Set(item)
		}
	case reflect.Array:
		if tag != 'A' {
			return out, wrongTag
		}
		n, err := d.Count()
		if err != nil {
			return out, err
		}
		if n != t.Len() {
			return out, Malformed("an array of another length than the signature's")
		}
		for i := 0; i < n; i++ {
			item, err := d.value(t.Elem(), depth+1)
			if err != nil {
				return out, err
			}
			out.Index(i).Set(item)
		}
	case reflect.Map:
		if tag == 'n' {
			return out, nil
		}
		if tag != 'M' {
			return out, wrongTag
		}
		n, err := d.Count()
		if err != nil {
			return out, err
		}
		out.Set(reflect.MakeMap(t))
		for i := 0; i < n; i++ {
			key, err := d.value(t.Key(), depth+1)
			if err != nil {
				return out, err
			}
			if key.Kind() == reflect.Interface && !key.IsNil() && !key.Elem().Type().Comparable() {
				return out, Malformed("a map key of a type that cannot be one: " + key.Elem().Type().String())
			}
			value, err := d.value(t.Elem(), depth+1)
			if err != nil {
				return out, err
			}
			out.SetMapIndex(key, value)
		}
	case reflect.Pointer:
		if tag == 'n' {
			return out, nil
		}
		d.At-- // the tag is the pointee's
		inner, err := d.value(t.Elem(), depth)
		if err != nil {
			return out, err
		}
		pointer := reflect.New(t.Elem())
		pointer.Elem().Set(inner)
		out.Set(pointer)
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return out, Malformed("a value of an interface type passk does not rebuild: " + t.String())
		}
		if tag != 'a' {
			return out, wrongTag
		}
		name, err := d.String()
		if err != nil {
			return out, err
		}
		if name == "" {
			if inner, err := d.Byte(); err != nil || inner != 'n' {
				return out, Malformed("an empty interface{} that holds a value")
			}
			return out, nil
		}
		dynamic, err := ParseType(name)
		if err != nil {
			return out, err
		}
		inner, err := d.value(dynamic, depth+1)
		if err != nil {
			return out, err
		}
		out.Set(inner)
	default:
		return out, Malformed("a value of a type passk does not rebuild: " + t.String())
	}
	return out, nil
}

var float32Type = reflect.TypeOf(float32(0))
