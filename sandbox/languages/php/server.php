<?php
// passk's server in the candidate's process (installed as /opt/passk/php/server.php, loaded with
// `-d auto_prepend_file=` before the model's code: its classes are declared before the model's code could declare
// one of their names). The candidate's program is the original program's text up to the tests (the prompt and the
// model's completion), followed by one statement that passk adds:
//
//     ;\PasskServer::serve('name');
//
// so the function is served exactly where the tests would have started in one process, after every top-level
// statement of the model's code. The server reads calls on descriptor 3, calls the function with the arguments
// rebuilt from data, and answers on descriptor 4: the value it returned ('R'), or what it threw ('E' <class>
// <message>). When the judge closes its end, serve returns and the program runs on to its end.
//
// What no catch survives ends this process as it would end the one process of the original program: `exit` in
// the function exits, a fatal error (memory exhausted) is fatal.
//
// The server is the candidate's own: the model's code may change anything in this process, and so anything the
// server sends. The judge trusts none of it (judge.php, values.py).

require __DIR__ . '/wire.php';

final class PasskServer
{
    private static bool $serving = false;

    private static function answer(string $name, array $args): string
    {
        try {
            return 'R' . PasskWire::encode($name(...$args));
        } catch (Throwable $thrown) {
            return 'E' . PasskWire::str(get_debug_type($thrown)) . PasskWire::str((string) $thrown->getMessage());
        }
    }

    // Serve the top-level function `name` until the judge closes its end.
    public static function serve(string $name): void
    {
        if (self::$serving) {
            return;
        }
        self::$serving = true;
        $calls = PasskWire::open(3, 'rb');
        $replies = PasskWire::open(4, 'wb');
        while (true) {
            try {
                $message = PasskWire::receive($calls);
                if ($message === null) {
                    return;
                }
                $reader = new PasskReader($message);
                if ($reader->letter() !== 'C') {
                    throw new PasskMalformed('not a call');
                }
                $called = $reader->string();
                $args = [];
                for ($count = $reader->u32(); $count > 0; $count--) {
                    $args[] = PasskWire::decodeValue($reader, 1);
                }
                $reader->finish();
            } catch (PasskMalformed|PasskUnsendable $e) {
                exit(70); // only the judge writes calls: a call it did not mean is passk's own failure
            }
            if ($called !== $name) {
                exit(70);
            }
            if (!PasskWire::send($replies, self::answer($name, $args))) {
                return;
            }
        }
    }
}
