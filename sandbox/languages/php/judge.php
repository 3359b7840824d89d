<?php
// The judge's runtime for PHP (installed as /opt/passk/php/judge.php): the entry point of the judge's process,
// `php judge.php` in the judge's directory. It holds none of the model's code.
//
// It runs the tests (main.php: the prompt's code before the function to complete, a stub for that function, the
// problem's tests) and reports PASS on descriptor 3 once their top-level code returned. A stub's call sends the
// arguments to the candidate's process (descriptor 4) and returns the value it answers (descriptor 5), rebuilt
// from data. How a call ends the tests instead (report.py): the candidate's process ended or closed its channel
// (ENDED), the function threw (RAISED <class>: <message>, which the tests cannot catch), it returned a value the
// wire cannot carry (ERROR), or it sent anything but one well-formed answer (BROKEN). Data the candidate wrote
// unasked is looked for before each call, before PASS (there it is BROKEN), and as failing tests end (FLAG
// out_of_turn).
//
// A failed test is reported as one process reports it: what the tests threw, uncaught, as PHP's own line on stderr
// ("PHP Fatal error:  Uncaught Exception: Test failed! in ..."), with exit status 255; PID 1 classifies it with the
// language's stderr patterns. (A fatal error of the tests themselves is PHP's own report.)

require __DIR__ . '/wire.php';

final class PasskJudge
{
    // How long the ending judge waits for data the candidate wrote unasked (microseconds). PHP cannot close the
    // descriptor of the calls itself (php://fd opens a duplicate): the candidate sees their end as the judge exits.
    private const SURPLUS_WAIT_US = 100000;
    private static $report;
    private static $calls;
    private static $replies;

    public static function open(): void
    {
        self::$report = PasskWire::open(3, 'wb');
        self::$calls = PasskWire::open(4, 'wb');
        self::$replies = PasskWire::open(5, 'rb');
    }

    // True if the candidate's process wrote anything no call asked for (one byte of it is consumed). An end of
    // input is not data: the next call sees the candidate gone.
    private static function unasked(int $waitUs = 0): bool
    {
        $read = [self::$replies];
        $write = $except = null;
        if (!@stream_select($read, $write, $except, 0, $waitUs)) {
            return false;
        }
        $data = @fread(self::$replies, 1);
        return $data !== false && $data !== '';
    }

    private static function writeReport(string $text): void
    {
        while ($text !== '') {
            $written = @fwrite(self::$report, $text);
            if (!$written) {
                return;
            }
            $text = substr($text, $written);
        }
    }

    // End the tests with `record` as the report (its last line is the outcome: report.py).
    public static function finish(string $record): never
    {
        self::writeReport((self::unasked(self::SURPLUS_WAIT_US) ? "FLAG out_of_turn\n" : '') . $record);
        exit(1);
    }

    private static function cannotCompare(string $name, string $type): never
    {
        self::finish("ERROR $name() returned a value of type $type, which passk cannot compare");
    }

    // The stubs' call: `name` with the arguments the tests passed.
    public static function call(string $name, array $args): mixed
    {
        if (self::unasked()) {
            self::finish("BROKEN $name(): the program wrote on its channel before the call");
        }
        $message = 'C' . PasskWire::str($name) . PasskWire::u32(count($args));
        foreach ($args as $arg) {
            $encoded = PasskWire::encode($arg);
            if ($encoded[0] === 'X') {
                $type = (new PasskReader(substr($encoded, 1)))->string();
                self::finish("ERROR the tests pass $name() a value of type $type, which passk cannot send");
            }
            $message .= $encoded;
        }
        if (!PasskWire::send(self::$calls, $message)) {
            self::finish('ENDED');
        }
        try {
            $reply = PasskWire::receive(self::$replies);
        } catch (PasskMalformed $e) {
            self::finish("BROKEN $name(): " . $e->getMessage());
        }
        if ($reply === null) {
            self::finish('ENDED');
        }
        return self::answer($name, $reply);
    }

    private static function answer(string $name, string $reply): mixed
    {
        try {
            $reader = new PasskReader($reply);
            switch ($reader->letter()) {
                case 'E':
                    $class = $reader->string();
                    $text = $reader->string();
                    $reader->finish();
                    self::finish("RAISED $class: $text");
                case 'U':
                    $type = $reader->string();
                    $reader->finish();
                    self::cannotCompare($name, $type);
                case 'R':
                    $value = PasskWire::decodeValue($reader, 0);
                    $reader->finish();
                    return $value;
            }
            throw new PasskMalformed('not an answer');
        } catch (PasskUnsendable $e) {
            self::cannotCompare($name, $e->type);
        } catch (PasskMalformed $e) {
            self::finish("BROKEN $name(): " . $e->getMessage());
        }
    }

    // After the tests returned: the only way to a pass. (Only what is there already: waiting for the candidate's
    // process to end would cost every pass its exit.)
    public static function pass(): never
    {
        if (self::unasked()) {
            self::finish('BROKEN the program wrote on its channel after its last answer');
        }
        self::writeReport('PASS');
        exit(0);
    }

    // The tests threw: PHP's own report of the uncaught throwable goes to stderr for PID 1's patterns.
    public static function failed(Throwable $thrown): never
    {
        $lines = array_slice(explode("\n", $thrown->getMessage()), 0, 20);
        fwrite(STDERR, sprintf("PHP Fatal error:  Uncaught %s: %s in %s:%d\n", get_debug_type($thrown),
            implode("\n", $lines), basename($thrown->getFile()), $thrown->getLine()));
        if (self::unasked(self::SURPLUS_WAIT_US)) {
            self::writeReport("FLAG out_of_turn\n");
        }
        exit(255);
    }
}

PasskJudge::open();
try {
    require getcwd() . '/main.php';
} catch (Throwable $thrown) {
    PasskJudge::failed($thrown);
}
PasskJudge::pass();
