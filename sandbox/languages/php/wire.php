<?php
// The value wire (sandbox/runtime/values.py has the rule) in PHP: framing on descriptors and the codec.
// Installed in the PHP image as /opt/passk/php/wire.php; used by the judge (judge.php) and by passk's server in
// the candidate's process (server.php). The descriptors are opened as php://fd/<n> (a duplicate of each), with no
// buffering.
//
// PHP's values and how each crosses, one canonical form each (equal values, equal bytes):
//   null n, false F, true T, an int l (64 bits), a float d (binary64: -0.0, NaN payloads and the infinities keep),
//   a string s (its bytes), and an array:
//   - a list (its keys 0..n-1 in order; the empty array too) as A, its items in order;
//   - any other array as M, its pairs in the array's own order (which `===` compares), int keys as l, string
//     keys as s.
// An object (of any class: stdClass, a closure, the model's own), a resource, an array that holds itself and a
// value nested too deeply cannot be rebuilt faithfully: the whole value crosses as X with its type, and the judge
// fails the sample as an error. A receiver refuses any other tag, and any byte that is not exactly one well-formed
// value in its one canonical form (PasskMalformed): an empty M or one that is a list (those are A), a key twice, a
// key that is not an int or a string, a string key PHP would store as an int ("5").
//
// Only data crosses: the receiver builds fresh values from bytes and never calls anything of the sender's.

final class PasskMalformed extends Exception
{
}

// A value the wire cannot carry; `type` names it (values.py's X).
final class PasskUnsendable extends Exception
{
    public function __construct(public readonly string $type)
    {
        parent::__construct("a value of type $type");
    }
}

// A message being read: its bytes and a position.
final class PasskReader
{
    private int $at = 0;

    public function __construct(private readonly string $data)
    {
    }

    public function take(int $size): string
    {
        if ($size < 0 || $this->at + $size > strlen($this->data)) {
            throw new PasskMalformed('truncated');
        }
        $chunk = substr($this->data, $this->at, $size);
        $this->at += $size;
        return $chunk;
    }

    public function letter(): string
    {
        return $this->take(1);
    }

    public function u32(): int
    {
        return unpack('N', $this->take(4))[1];
    }

    public function string(): string
    {
        return $this->take($this->u32());
    }

    public function finish(): void
    {
        if ($this->at !== strlen($this->data)) {
            throw new PasskMalformed('trailing bytes');
        }
    }
}

final class PasskWire
{
    public const MAX_DEPTH = 100;
    public const MAX_MESSAGE = 1 << 30;
    private const READ_CHUNK = 1 << 20;

    // ------------------------------------------------------------------ bytes out

    public static function u32(int $value): string
    {
        return pack('N', $value);
    }

    public static function str(string $bytes): string
    {
        return pack('N', strlen($bytes)) . $bytes;
    }

    private static function encodeValue(string &$out, mixed $value, int $depth): void
    {
        if ($depth > self::MAX_DEPTH) {
            throw new PasskUnsendable('deeply nested value');
        }
        if ($value === null) {
            $out .= 'n';
        } elseif ($value === true) {
            $out .= 'T';
        } elseif ($value === false) {
            $out .= 'F';
        } elseif (is_int($value)) {
            $out .= 'l' . pack('J', $value);
        } elseif (is_float($value)) {
            $out .= 'd' . pack('E', $value);
        } elseif (is_string($value)) {
            $out .= 's' . self::str($value);
        } elseif (is_array($value)) {
            if (array_is_list($value)) {
                $out .= 'A' . self::u32(count($value));
                foreach ($value as $item) {
                    self::encodeValue($out, $item, $depth + 1);
                }
            } else {
                $out .= 'M' . self::u32(count($value));
                foreach ($value as $key => $item) {
                    self::encodeValue($out, $key, $depth + 1);
                    self::encodeValue($out, $item, $depth + 1);
                }
            }
        } else {
            throw new PasskUnsendable(get_debug_type($value));
        }
    }

    // The bytes of `value`: itself, or X with the type of what cannot cross (the whole value).
    public static function encode(mixed $value): string
    {
        $out = '';
        try {
            self::encodeValue($out, $value, 0);
        } catch (PasskUnsendable $e) {
            return 'X' . self::str($e->type);
        }
        return $out;
    }

    // ------------------------------------------------------------------ bytes in

    // A value rebuilt from `reader`: PasskUnsendable for X (a value the sender could not carry), PasskMalformed
    // for anything that is not one well-formed value of a type PHP rebuilds.
    public static function decodeValue(PasskReader $reader, int $depth): mixed
    {
        if ($depth > self::MAX_DEPTH) {
            throw new PasskMalformed('nested too deeply');
        }
        $tag = $reader->letter();
        switch ($tag) {
            case 'n':
                return null;
            case 'T':
                return true;
            case 'F':
                return false;
            case 'l':
                return unpack('J', $reader->take(8))[1];
            case 'd':
                return unpack('E', $reader->take(8))[1];
            case 's':
                return $reader->string();
            case 'A':
                // Item by item: a count alone never makes the reader allocate it.
                $count = $reader->u32();
                $list = [];
                for ($i = 0; $i < $count; $i++) {
                    $list[] = self::decodeValue($reader, $depth + 1);
                }
                return $list;
            case 'M':
                return self::decodeMap($reader, $depth);
            case 'X':
                throw new PasskUnsendable($reader->string());
        }
        throw new PasskMalformed('a tag PHP does not read: ' . bin2hex($tag));
    }

    private static function decodeMap(PasskReader $reader, int $depth): array
    {
        $count = $reader->u32();
        if ($count === 0) {
            throw new PasskMalformed('an empty array crosses as A');
        }
        $map = [];
        for ($i = 0; $i < $count; $i++) {
            $key = self::decodeValue($reader, $depth + 1);
            if (is_string($key)) {
                if ((string) (int) $key === $key) {
                    throw new PasskMalformed('a string key PHP stores as an int');
                }
            } elseif (!is_int($key)) {
                throw new PasskMalformed('an array key that is not an int or a string');
            }
            if (array_key_exists($key, $map)) {
                throw new PasskMalformed('an array key twice');
            }
            $map[$key] = self::decodeValue($reader, $depth + 1);
        }
        if (array_is_list($map)) {
            throw new PasskMalformed('a list crosses as A');
        }
        return $map;
    }

    // The one value `data` holds.
    public static function decode(string $data): mixed
    {
        $reader = new PasskReader($data);
        $value = self::decodeValue($reader, 0);
        $reader->finish();
        return $value;
    }

    // ------------------------------------------------------------------ framing

    // A descriptor as an unbuffered stream.
    public static function open(int $fd, string $mode)
    {
        $stream = fopen("php://fd/$fd", $mode);
        stream_set_read_buffer($stream, 0);
        stream_set_write_buffer($stream, 0);
        return $stream;
    }

    // Exactly `size` bytes from `stream`; null at a clean end of input before the first byte, Malformed if cut.
    private static function readExactly($stream, int $size, bool $cleanEnd): ?string
    {
        $data = '';
        while (strlen($data) < $size) {
            $chunk = @fread($stream, min($size - strlen($data), self::READ_CHUNK));
            if ($chunk === false || $chunk === '') {
                if (!feof($stream) && $chunk !== false) {
                    continue;
                }
                if ($cleanEnd && $data === '') {
                    return null;
                }
                throw new PasskMalformed('a message cut short');
            }
            $data .= $chunk;
        }
        return $data;
    }

    // The next framed message on `stream`, or null at a clean end of input before it.
    public static function receive($stream): ?string
    {
        $header = self::readExactly($stream, 4, true);
        if ($header === null) {
            return null;
        }
        $size = unpack('N', $header)[1];
        if ($size > self::MAX_MESSAGE) {
            throw new PasskMalformed('a message over 1 GiB');
        }
        return $size === 0 ? '' : self::readExactly($stream, $size, false);
    }

    // Writes `message` framed; false if the other side is gone.
    public static function send($stream, string $message): bool
    {
        $framed = self::u32(strlen($message)) . $message;
        while ($framed !== '') {
            $written = @fwrite($stream, $framed);
            if ($written === false || $written === 0) {
                return false;
            }
            $framed = substr($framed, $written);
        }
        return true;
    }
}
