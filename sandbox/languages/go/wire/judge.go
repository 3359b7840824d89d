package wire

import (
	"os"
	"os/signal"
	"reflect"
	"sync"
	"syscall"
	"testing"
)

// The judge's side. A judge is a test binary of the problem's own code before the function to complete, a
// stub with that function's signature, and the problem's tests (sandbox/languages/go.py builds it); its
// TestMain is Main. The stub calls Call, which sends the arguments to the candidate's process and returns
// what it answered; anything else the candidate does ends the tests here with a report on fd 3
// (sandbox/runtime/report.py). No code of the model's is in this process.

// The judge's descriptors (sandbox/runtime/native.py).
const (
	reportFd  = 3
	callsFd   = 4
	repliesFd = 5
)

var (
	callLock sync.Mutex
	calls    int
)

// end writes the report's last record and ends the judge (status 1: only Pass exits with 0).
func end(record string) {
	writeAll(reportFd, []byte(record))
	os.Exit(1)
}

// checkUnasked: a reply waiting before a call was asked for (or before the pass) is out of turn, and the
// channel is then no longer one answer per call: the tests end there.
func checkUnasked(when string) {
	if pending(repliesFd) {
		writeAll(reportFd, []byte("FLAG out_of_turn\n"))
		end("BROKEN the solution's process sent data " + when + " that nothing asked for")
	}
}

// Call calls `name` in the candidate's process with the values args point to, and stores what it returned
// where results point to (one pointer per result of the signature). It returns only with an answer: a
// panic, an end or a broken reply of the candidate's ends the tests.
func Call(name string, results []interface{}, args ...interface{}) {
	callLock.Lock()
	defer callLock.Unlock()
	checkUnasked("before " + name + "() was called")
	calls++
	e := Encoder{}
	e.Byte('C')
	e.String(name)
	e.U32(uint32(len(args)))
	for _, arg := range args {
		e.Value(reflect.ValueOf(arg).Elem(), 1)
	}
	if e.Uncarried != "" {
		end("ERROR passk cannot send " + name + "() an argument of the tests: " + e.Uncarried)
	}
	if err := send(callsFd, e.Buf); err != nil {
		end("ENDED")
	}
	reply, err := receive(repliesFd)
	if err == errEnded {
		end("ENDED")
	}
	if err != nil {
		broken(name, err)
	}
	d := Decoder{Data: reply}
	kind, err := d.Byte()
	if err != nil {
		broken(name, err)
	}
	switch kind {
	case 'E':
		class, err := d.String()
		if err == nil {
			var message string
			message, err = d.String()
			if err == nil {
				err = d.Done()
			}
			if err == nil {
				end("RAISED " + class + ": " + message)
			}
		}
		broken(name, err)
	case 'U':
		kind, err := d.String()
		if err == nil {
			err = d.Done()
		}
		if err != nil {
			broken(name, err)
		}
		uncomparable(name, kind)
	case 'R':
		err = readResults(&d, results)
		if err == nil {
			err = d.Done()
		}
		if uncarried, ok := err.(Uncarried); ok {
			uncomparable(name, uncarried.Type)
		}
		if err != nil {
			broken(name, err)
		}
	default:
		broken(name, Malformed("not an answer"))
	}
}

// readResults: no result is n, one is its value, several are a tuple of them.
func readResults(d *Decoder, results []interface{}) error {
	if len(results) == 0 {
		tag, err := d.Byte()
		if err == nil && tag != 'n' {
			err = wrongTag
		}
		return err
	}
	depth := 0
	if len(results) > 1 {
		tag, err := d.Byte()
		if err == nil && tag != 'P' {
			err = wrongTag
		}
		var n uint32
		if err == nil {
			n, err = d.U32()
		}
		if err == nil && int(n) != len(results) {
			err = Malformed("a tuple of another size than the signature's")
		}
		if err != nil {
			return err
		}
		depth = 1
	}
	for _, result := range results {
		target := reflect.ValueOf(result).Elem()
		value, err := d.Value(target.Type(), depth)
		if err != nil {
			return err
		}
		target.Set(value)
	}
	return nil
}

func broken(name string, err error) {
	writeAll(reportFd, []byte("FLAG out_of_turn\n"))
	end("BROKEN " + name + "(): " + err.Error())
}

func uncomparable(name, kind string) {
	end("ERROR " + name + "() returned a value of type " + kind + ", which passk cannot compare")
}

// Main is the judge's TestMain: it runs the tests and reports a pass only when every test ran and passed
// and the candidate was called. The tests' own output goes to stderr, where PID 1 reads why they failed.
func Main(m *testing.M) {
	os.Stdout = os.Stderr
	code := m.Run()
	if code != 0 {
		os.Exit(code)
	}
	Pass()
}

// Pass: the only way to a pass, after the tests returned.
func Pass() {
	callLock.Lock()
	if calls == 0 {
		end("ERROR the tests never called the solution")
	}
	checkUnasked("after its last answer")
	writeAll(reportFd, []byte("PASS"))
	os.Exit(0)
}

func init() {
	// A write to a pipe whose reader is gone fails with EPIPE instead of killing the writer: the judge then
	// reports that the candidate ended, and the candidate's server simply stops.
	signal.Ignore(syscall.SIGPIPE)
}
