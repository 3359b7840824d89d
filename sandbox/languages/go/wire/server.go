package wire

import (
	"fmt"
	"os"
	"reflect"
)

// The candidate's side. The candidate is a test binary of the model's package (the prompt and the
// completion) and one generated file whose TestMain is `Serve("<name>", <name>)`; its tests, if it declares
// any, never run. Serve answers the judge's calls until the judge closes its end, then exits with status 0.
// Everything here runs in the candidate's own process: what the model's code does to it (its init
// functions, goroutines, writes of its own on the descriptors) changes only what this process answers,
// which the judge checks as it checks any answer.

// The candidate's descriptors (sandbox/runtime/native.py).
const (
	serverCallsFd   = 3
	serverRepliesFd = 4
)

// The longest panic message sent (the judge's report shows the start of it).
const maxPanicMessage = 4096

// Serve answers calls of `name` with fn.
func Serve(name string, fn interface{}) {
	f := reflect.ValueOf(fn)
	t := f.Type()
	for {
		message, err := receive(serverCallsFd)
		if err == errEnded {
			os.Exit(0)
		}
		if err != nil {
			stop("the tests' call could not be read", err)
		}
		d := Decoder{Data: message}
		kind, err := d.Byte()
		if err == nil && kind != 'C' {
			err = Malformed("not a call")
		}
		var called string
		if err == nil {
			called, err = d.String()
		}
		if err == nil && called != name {
			err = Malformed("a call of " + called + "(), which is not served here")
		}
		var count uint32
		if err == nil {
			count, err = d.U32()
		}
		if err == nil && int(count) != t.NumIn() {
			err = Malformed("a call with another number of arguments than " + name + "() takes")
		}
		args := make([]reflect.Value, t.NumIn())
		for i := 0; err == nil && i < len(args); i++ {
			args[i], err = d.Value(t.In(i), 1)
		}
		if err == nil {
			err = d.Done()
		}
		if err != nil {
			// Only a function whose types differ from the prompt's (the model redefined a type the
			// signature names) receives arguments it cannot rebuild.
			stop("the tests' call of "+name+"() does not fit its parameters", err)
		}
		if send(serverRepliesFd, invoke(f, args)) != nil {
			os.Exit(0)
		}
	}
}

func stop(what string, err error) {
	fmt.Fprintf(os.Stderr, "passk: %s: %v\n", what, err)
	os.Exit(1)
}

// invoke calls f in a goroutine of its own, so that a panic or runtime.Goexit in it becomes an answer ('E')
// and the server goes on; the reply is R and the results, or E and what stopped the function.
func invoke(f reflect.Value, args []reflect.Value) []byte {
	done := make(chan []byte, 1)
	go func() {
		finished := false
		defer func() {
			if !finished {
				done <- raised(recover())
			}
		}()
		var out []reflect.Value
		if f.Type().IsVariadic() {
			out = f.CallSlice(args)
		} else {
			out = f.Call(args)
		}
		e := Encoder{}
		e.Byte('R')
		switch len(out) {
		case 0:
			e.Byte('n')
		case 1:
			e.Value(out[0], 0)
		default:
			e.Byte('P')
			e.U32(uint32(len(out)))
			for _, result := range out {
				e.Value(result, 1)
			}
		}
		finished = true
		done <- e.Buf
	}()
	return <-done
}

// raised: the E reply for what stopped the function. The class names the panic's value by its Go type
// ("panic(runtime.boundsError)", "panic(string)"), as Go prints `panic: <value>`; a function that called
// runtime.Goexit (or panic(nil)) ended its goroutine without a value.
func raised(value interface{}) []byte {
	class, message := "runtime.Goexit", "the function called runtime.Goexit or panic(nil)"
	if value != nil {
		class, message = "panic("+reflect.TypeOf(value).String()+")", describe(value)
	}
	if len(message) > maxPanicMessage {
		message = message[:maxPanicMessage] + "..."
	}
	e := Encoder{}
	e.Byte('E')
	e.String(class)
	e.String(message)
	return e.Buf
}

// describe: the panic's value as Go's runtime prints it (an error's Error(), a Stringer's String(), else
// the value); methods of the program's types may panic in turn.
func describe(value interface{}) (text string) {
	defer func() {
		if recover() != nil {
			text = "(a value whose Error or String method panicked)"
		}
	}()
	switch v := value.(type) {
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(value)
}
