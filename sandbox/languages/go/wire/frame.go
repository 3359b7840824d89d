package wire

import (
	"errors"
	"io"
	"syscall"
	"unsafe"
)

// Framing on raw descriptors (a 4-byte big-endian length, then the message). Raw system calls, not *os.File:
// the descriptors are the pipes PID 1 gave (sandbox/runtime/native.py), used as they are.

// errEnded: the other side is gone (end of input before a message, or a write to a pipe nobody reads).
var errEnded = errors.New("the other side ended")

func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			if err == syscall.EPIPE {
				return errEnded
			}
			return err
		}
		data = data[n:]
	}
	return nil
}

// send writes one framed message.
func send(fd int, message []byte) error {
	framed := make([]byte, 4, 4+len(message))
	n := uint32(len(message))
	framed[0], framed[1], framed[2], framed[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return writeAll(fd, append(framed, message...))
}

func readSome(fd int, buf []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// receive reads one framed message: errEnded on a clean end of input before it, Malformed on a cut one.
// The buffer grows with what arrives, never with what the length claims.
func receive(fd int) ([]byte, error) {
	var header [4]byte
	got := 0
	for got < 4 {
		n, err := readSome(fd, header[got:])
		if err != nil {
			if got == 0 && err == io.EOF {
				return nil, errEnded
			}
			if err == io.EOF {
				return nil, Malformed("a message cut short")
			}
			return nil, err
		}
		got += n
	}
	size := int(uint32(header[0])<<24 | uint32(header[1])<<16 | uint32(header[2])<<8 | uint32(header[3]))
	if size > MaxMessage {
		return nil, Malformed("a message over 1 GiB")
	}
	message := make([]byte, 0, smaller(size, 1<<16))
	chunk := make([]byte, smaller(size, 1<<16))
	for len(message) < size {
		want := size - len(message)
		if want > len(chunk) {
			want = len(chunk)
		}
		n, err := readSome(fd, chunk[:want])
		if err == io.EOF {
			return nil, Malformed("a message cut short")
		}
		if err != nil {
			return nil, err
		}
		message = append(message, chunk[:n]...)
	}
	return message, nil
}

func smaller(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// pending: data waiting to be read on fd (POLLIN; an end of input alone is POLLHUP, not data).
func pending(fd int) bool {
	type pollFd struct {
		fd      int32
		events  int16
		revents int16
	}
	const pollIn = 0x1
	fds := [1]pollFd{{fd: int32(fd), events: pollIn}}
	var zero syscall.Timespec
	for {
		n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1,
			uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		return errno == 0 && n > 0 && fds[0].revents&pollIn != 0
	}
}
