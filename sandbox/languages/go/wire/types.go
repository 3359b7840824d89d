package wire

import (
	"reflect"
	"strconv"
	"strings"
)

// The dynamic types an interface{} may cross with: a fixed grammar of Go's own type names, as reflect
// writes them (Type.String()), so that the name a sender gives is the receiver's type exactly:
//
//	type  = basic | "interface {}" | "[]" type | "[" length "]" type | "map[" type "]" type | "*" type
//	basic = bool | string | int | int8 | int16 | int32 | int64 | uint | uint8 | uint16 | uint32 | uint64
//	      | uintptr | float32 | float64
//
// (rune is int32 and byte is uint8, as Go itself names them.) A type any program defined, a struct, a func,
// a channel, a complex number or a non-empty interface has no name here: it crosses as X, never rebuilt.

var basicTypes = map[string]reflect.Type{}

var emptyInterface = reflect.TypeOf((*interface{})(nil)).Elem()

func init() {
	for _, t := range []reflect.Type{
		reflect.TypeOf(false), reflect.TypeOf(""),
		reflect.TypeOf(int(0)), reflect.TypeOf(int8(0)), reflect.TypeOf(int16(0)), reflect.TypeOf(int32(0)),
		reflect.TypeOf(int64(0)), reflect.TypeOf(uint(0)), reflect.TypeOf(uint8(0)), reflect.TypeOf(uint16(0)),
		reflect.TypeOf(uint32(0)), reflect.TypeOf(uint64(0)), reflect.TypeOf(uintptr(0)),
		reflect.TypeOf(float32(0)), reflect.TypeOf(float64(0)),
	} {
		basicTypes[t.String()] = t
	}
}

// TypeName is the name a value of dynamic type t crosses with, if t is in the grammar.
func TypeName(t reflect.Type) (string, bool) {
	if !inGrammar(t, 0) {
		return "", false
	}
	return t.String(), true
}

func inGrammar(t reflect.Type, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	if t.Name() != "" {
		// A named type: only the predeclared ones (no package path), and only those of the grammar.
		return t.PkgPath() == "" && basicTypes[t.Name()] == t
	}
	switch t.Kind() {
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return inGrammar(t.Elem(), depth+1)
	case reflect.Map:
		return inGrammar(t.Key(), depth+1) && inGrammar(t.Elem(), depth+1)
	}
	return false
}

// ParseType rebuilds the type a name of the grammar names (Malformed for any other name).
func ParseType(name string) (reflect.Type, error) {
	t, rest, err := parseType(name, 0)
	if err == nil && rest != "" {
		err = Malformed("an interface{} of a type passk does not rebuild: " + strconv.Quote(name))
	}
	return t, err
}

func parseType(name string, depth int) (t reflect.Type, rest string, err error) {
	refused := Malformed("an interface{} of a type passk does not rebuild: " + strconv.Quote(name))
	if depth > MaxDepth {
		return nil, "", refused
	}
	defer func() {
		// reflect refuses what the grammar allows but Go does not (a map key of a slice type, an array
		// too large for the address space).
		if recover() != nil {
			t, rest, err = nil, "", refused
		}
	}()
	switch {
	case strings.HasPrefix(name, "interface {}"):
		return emptyInterface, name[len("interface {}"):], nil
	case strings.HasPrefix(name, "[]"):
		elem, rest, err := parseType(name[2:], depth+1)
		if err != nil {
			return nil, "", err
		}
		return reflect.SliceOf(elem), rest, nil
	case strings.HasPrefix(name, "["):
		end := strings.IndexByte(name, ']')
		if end < 2 {
			return nil, "", refused
		}
		digits := name[1:end]
		length, convErr := strconv.Atoi(digits)
		if convErr != nil || length < 0 || length > MaxMessage || strconv.Itoa(length) != digits {
			return nil, "", refused
		}
		elem, rest, err := parseType(name[end+1:], depth+1)
		if err != nil {
			return nil, "", err
		}
		return reflect.ArrayOf(length, elem), rest, nil
	case strings.HasPrefix(name, "map["):
		key, rest, err := parseType(name[4:], depth+1)
		if err != nil || !strings.HasPrefix(rest, "]") {
			return nil, "", refused
		}
		if !key.Comparable() {
			return nil, "", refused
		}
		elem, rest, err := parseType(rest[1:], depth+1)
		if err != nil {
			return nil, "", err
		}
		return reflect.MapOf(key, elem), rest, nil
	case strings.HasPrefix(name, "*"):
		elem, rest, err := parseType(name[1:], depth+1)
		if err != nil {
			return nil, "", err
		}
		return reflect.PointerTo(elem), rest, nil
	}
	// A basic type: the longest name of the grammar the text starts with, ending at a delimiter.
	end := 0
	for end < len(name) && (name[end] >= 'a' && name[end] <= 'z' || name[end] >= '0' && name[end] <= '9') {
		end++
	}
	if basic, ok := basicTypes[name[:end]]; ok {
		return basic, name[end:], nil
	}
	return nil, "", refused
}
