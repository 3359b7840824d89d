"""POST /run_code as a drop-in for SandboxFusion, against the real stack (Postgres, the API over HTTP, workers with
Docker sandboxes):

- SandboxFusion's own run_code tests (bytedance/SandboxFusion, sandbox/tests/runners/test_{python,cpp,java,nodejs,
  go,rust,pytest,jest}.py), each assertion as there and each program as there (Java's written more compactly), sent over
  HTTP. Python's fetch_files test reads back a
  relative path only (SandboxFusion's also writes /mnt/b, outside the program's directory, which passk's sandbox
  does not let a program write).
- verl's sandbox_fusion reward (volcengine/verl, verl/utils/reward_score/sandbox_fusion/utils.py) on correct,
  wrong, looping, sleeping, syntax-error, runtime-error and stdin programs in every language, with nothing changed
  but its URL, which carries the API key as HTTP Basic credentials.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import docker
import httpx
import pytest
import requests

from passk_dev.localstack import LocalStack
from service.api.runcode.service import names as run_code_names
from service.core.settings import Settings
from sandbox.images import ensure_language_image

pytestmark = pytest.mark.slow

SUCCESS, FAILED = "Success", "Failed"
FINISHED, TLE = "Finished", "TimeLimitExceeded"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    # The images of SandboxFusion's ported tests first (verl's tests build their language's as they start): a
    # worker builds a missing one on a request's time, which on a busy machine can outlast the 504 retries this
    # module (as verl) allows.
    client = docker.from_env()
    for name in ("python", "python-pytest", "cpp", "java", "java-junit", "javascript", "typescript-jest", "go", "rust"):
        ensure_language_image(client, name)
    with LocalStack(prefix="passk_runcode") as running:
        running.start_worker(concurrency=4)
        yield running


@pytest.fixture(scope="module")
def client(stack: LocalStack) -> Iterator[httpx.Client]:
    with stack.client() as c:
        yield c


def run(client: httpx.Client, **request: Any) -> dict:
    """SandboxFusion's RunCodeRequest(...).model_dump(): its defaults, then the test's fields."""
    body = {"compile_timeout": 10, "run_timeout": 10, "memory_limit_MB": -1, "stdin": None, "files": {},
            "fetch_files": [], **request}
    # Not run within its bound (a busy machine) is a 504, which SandboxFusion's clients retry (verl: 3 attempts).
    for _ in range(3):
        response = client.post("/run_code", json=body)
        if response.status_code != 504:
            break
    assert response.status_code == 200, response.text
    return response.json()


# ------------------------------------------------------------------ SandboxFusion's tests: python


def test_python_print(client: httpx.Client) -> None:
    result = run(client, language="python", code="print(123)", run_timeout=5)
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["stdout"].strip() == "123"


def test_python_timeout(client: httpx.Client) -> None:
    result = run(client, language="python", code="import time; time.sleep(0.2)", run_timeout=0.1)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == TLE


def test_python_assertion_error(client: httpx.Client) -> None:
    result = run(client, language="python", code="assert 1 == 2", run_timeout=5)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED
    assert "AssertionError" in result["run_result"]["stderr"]


def test_python_syntax_error(client: httpx.Client) -> None:
    result = run(client, language="python", code="int a = 1", run_timeout=5)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED
    assert "SyntaxError: invalid syntax" in result["run_result"]["stderr"]


def test_python_file_read(client: httpx.Client) -> None:
    result = run(client, language="python", code='print(open("dir1/dir2/dir3/secret_flag").read())', run_timeout=5,
                 files={"dir1/dir2/dir3/secret_flag": "ImhlbGxvLCB0aGlzIGlzIGEgdGVzdCI="})
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert "hello, this is a test" in result["run_result"]["stdout"]


def test_python_stdin(client: httpx.Client) -> None:
    result = run(client, language="python", code="print(int(input()))", run_timeout=5, stdin="65535")
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"] == "65535\n"


def test_python_fetch_files(client: httpx.Client) -> None:
    result = run(client, language="python", code='open("a.txt", "w").write("secret")', run_timeout=5,
                 fetch_files=["a.txt"])
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert base64.b64decode(result["files"]["a.txt"].encode()).decode() == "secret"


# ------------------------------------------------------------------ cpp

CPP_PRINT = """
    #include <iostream>

    int main() {
        std::cout << "123" << std::endl;
        return 0;
    }
    """
CPP_SLEEP = """
    #include <iostream>
    #include <chrono>
    #include <thread>

    int main() {
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        return 0;
    }
    """
CPP_ASSERT = """
    #include <iostream>
    #include <cassert>

    int main() {
        assert(1 == 2);
        return 0;
    }
    """
CPP_COMPILE_ERROR = """
    int main() {
        object i = ?;
        return 0;
    }
    """
CPP_STDIN = """
    #include <iostream>

    int main() {
        int num;
        std::cin >> num;
        std::cout << num << std::endl;
        return 0;
    }
    """
CPP_PTHREAD = """
#include <memory>
#include <queue>
#include <mutex>
#include <condition_variable>
#include <iostream>
#include <thread>
#include <vector>
#include <optional>

template<typename T>
class ThreadSafeQueue {
public:
    ThreadSafeQueue() = default;

    template<class U>
    auto push(U&& val) -> std::enable_if_t<std::is_same<T, typename std::decay<U>::type>::value> {
        std::unique_lock<std::mutex> lock(mutex_);
        queue_.push(std::forward<U>(val));
        cv_.notify_one();
    }

    std::optional<T> pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this]() { return !queue_.empty(); });
        T value = std::move(queue_.front());
        queue_.pop();
        return value;
    }

    bool empty() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return queue_.empty();
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::queue<T> queue_;
};



void producer(ThreadSafeQueue<int>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        std::cout << "Producer " << id << " pushing " << i << std::endl;
        queue.push(i);
    }
}

void producer_move(ThreadSafeQueue<std::unique_ptr<int>>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        std::cout << "Producer " << id << " pushing " << i << std::endl;
        queue.push(std::move(std::make_unique<int>(i)));
    }
}

void consumer(ThreadSafeQueue<int>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        auto value = queue.pop();
        std::cout << "Consumer " << id << " popped " << *value << std::endl;
    }
}

void consumer_move(ThreadSafeQueue<std::unique_ptr<int>>& queue, int id) {
    for (int i = 0; i < 3; ++i) {
        auto value = queue.pop();
        std::cout << "Consumer " << id << " popped " << *(*value) << std::endl;
    }
}

int main() {
    {
        ThreadSafeQueue<int> queue;

        std::thread producer1(producer, std::ref(queue), 1);
        std::thread producer2(producer, std::ref(queue), 2);
        std::thread consumer1(consumer, std::ref(queue), 1);
        std::thread consumer2(consumer, std::ref(queue), 2);

        producer1.join();
        producer2.join();
        consumer1.join();
        consumer2.join();
    }

    {
        ThreadSafeQueue<std::unique_ptr<int>> queue;

        std::thread producer1(producer_move, std::ref(queue), 1);
        std::thread producer2(producer_move, std::ref(queue), 2);
        std::thread consumer1(consumer_move, std::ref(queue), 1);
        std::thread consumer2(consumer_move, std::ref(queue), 2);

        producer1.join();
        producer2.join();
        consumer1.join();
        consumer2.join();
    }


    return 0;
}
    """


def test_cpp_print(client: httpx.Client) -> None:
    result = run(client, language="cpp", code=CPP_PRINT, run_timeout=5)
    assert result["status"] == SUCCESS, result
    assert result["compile_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"].strip() == "123"


def test_cpp_timeout(client: httpx.Client) -> None:
    result = run(client, language="cpp", code=CPP_SLEEP, run_timeout=0.5, compile_timeout=5)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == TLE


def test_cpp_assertion_error(client: httpx.Client) -> None:
    result = run(client, language="cpp", code=CPP_ASSERT)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED
    assert "Assertion" in result["run_result"]["stderr"]


def test_cpp_compile_error(client: httpx.Client) -> None:
    result = run(client, language="cpp", code=CPP_COMPILE_ERROR)
    assert result["status"] == FAILED, result
    assert result["compile_result"]["status"] == FINISHED
    assert result["compile_result"]["return_code"] != 0
    assert result["run_result"] is None


def test_cpp_stdin(client: httpx.Client) -> None:
    result = run(client, language="cpp", code=CPP_STDIN, run_timeout=5, stdin="65535")
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"] == "65535\n"


def test_cpp_pthread(client: httpx.Client) -> None:
    result = run(client, language="cpp", code=CPP_PTHREAD, run_timeout=2)
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED


# ------------------------------------------------------------------ java


def _java(body: str, imports: str = "") -> str:
    return f"""{imports}
    public class Main {{
        public static void main(String[] args) {{
{body}
        }}
    }}
    """


def test_java_print(client: httpx.Client) -> None:
    result = run(client, language="java", code=_java("System.out.println(123);"))
    assert result["status"] == SUCCESS, result
    assert result["compile_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"].strip() == "123"


def test_java_compile_error(client: httpx.Client) -> None:
    result = run(client, language="java", code=_java("System.uto.println(123);"))
    assert result["status"] == FAILED, result
    assert result["compile_result"]["status"] == FINISHED
    assert result["compile_result"]["return_code"] != 0
    assert result["run_result"] is None


def test_java_timeout(client: httpx.Client) -> None:
    code = _java('try { Thread.sleep(200); } catch (InterruptedException e) { System.err.println("interrupted"); }')
    result = run(client, language="java", code=code, run_timeout=0.1)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == TLE


def test_java_assertion_error(client: httpx.Client) -> None:
    result = run(client, language="java", code=_java('throw new AssertionError("Intentional assertion error");'))
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED
    assert "java.lang.AssertionError" in result["run_result"]["stderr"]


def test_java_assert(client: httpx.Client) -> None:
    result = run(client, language="java", code=_java("assert 1 == 2;"))
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED


def test_java_external_jar(client: httpx.Client) -> None:
    code = """
    import org.javatuples.Pair;
    import org.javatuples.Triplet;
    public class Main {
        public static void main(String[] args) {
            Pair<String, Integer> pair = Pair.with("apple", 1);
            String fruit = pair.getValue0();
            Integer quantity = pair.getValue1();
            System.out.println("Fruit: " + fruit + ", Quantity: " + quantity);
            Triplet<String, Integer, Double> triplet = Triplet.with("banana", 2, 0.99);
            String fruitTriplet = triplet.getValue0();
            Integer quantityTriplet = triplet.getValue1();
            Double priceTriplet = triplet.getValue2();
            System.out.println("Fruit: " + fruitTriplet + ", Quantity: " + quantityTriplet + ", Price: " + priceTriplet);
        }
    }
    """
    result = run(client, language="java", code=code)
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert "Fruit: banana, Quantity: 2, Price: 0.99" in result["run_result"]["stdout"]


def test_java_stdin(client: httpx.Client) -> None:
    code = _java("Scanner scanner = new Scanner(System.in);\nint number = scanner.nextInt();\n"
                 "System.out.println(number);", imports="import java.util.Scanner;")
    result = run(client, language="java", code=code, run_timeout=5, stdin="65535")
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"] == "65535\n"


# ------------------------------------------------------------------ nodejs


def test_nodejs_print(client: httpx.Client) -> None:
    result = run(client, language="nodejs", code="console.log(123)", run_timeout=5)
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["stdout"].strip() == "123"


def test_nodejs_timeout(client: httpx.Client) -> None:
    code = """
    const util = require('util');
    const sleep = util.promisify(setTimeout);
    async function main() {
        await sleep(1000);
    }
    main();
    """
    result = run(client, language="nodejs", code=code, run_timeout=0.1)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == TLE


def test_nodejs_assertion_error(client: httpx.Client) -> None:
    code = "\n    const assert = require('assert');\n    assert.strictEqual(1, 2, '1 !== 2');\n    "
    result = run(client, language="nodejs", code=code)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED
    assert "AssertionError" in result["run_result"]["stderr"]


def test_nodejs_humanevalx_assertion_error(client: httpx.Client) -> None:
    result = run(client, language="nodejs", code="console.assert(1 === 2);")
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert "Assertion failed" in result["run_result"]["stderr"]


def test_nodejs_lodash_dep(client: httpx.Client) -> None:
    code = """
    const _ = require("lodash");
    const assert = require('assert');
    assert(_.isEqual(1, 1))
    """
    result = run(client, language="nodejs", code=code, run_timeout=5)
    assert result["status"] == SUCCESS, result


def test_nodejs_stdin(client: httpx.Client) -> None:
    code = """
    process.stdin.on('data', (input) => {
        const num = parseInt(input.toString());
        console.log(num);
        process.exit();
    });
    """
    result = run(client, language="nodejs", code=code, run_timeout=5, stdin="65535")
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"] == "65535\n"


# ------------------------------------------------------------------ go


def test_golang_print(client: httpx.Client) -> None:
    code = '\n    package main\n    import (\n        "fmt"\n    )\n    func main() {\n        fmt.Println("123")\n    }\n    '
    result = run(client, language="go", code=code)
    assert result["status"] == SUCCESS, result
    assert result["compile_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"].strip() == "123"


def test_golang_timeout(client: httpx.Client) -> None:
    code = ('\n    package main\n    import (\n        "time"\n    )\n    func main() {\n'
            "        time.Sleep(200 * time.Millisecond)\n    }\n    ")
    result = run(client, language="go", code=code, run_timeout=0.19, compile_timeout=1)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == TLE


def test_golang_stdin(client: httpx.Client) -> None:
    code = ('\n    package main\n    import "fmt"\n    func main() {\n        var num int\n        fmt.Scan(&num)\n'
            "        fmt.Println(num)\n    }\n    ")
    result = run(client, language="go", code=code, run_timeout=5, stdin="65535")
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"] == "65535\n"


# ------------------------------------------------------------------ rust


def test_rust_print(client: httpx.Client) -> None:
    result = run(client, language="rust", code='\n    fn main() {\n        println!("123");\n    }\n    ', run_timeout=5)
    assert result["status"] == SUCCESS, result
    assert result["compile_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"].strip() == "123"


def test_rust_timeout(client: httpx.Client) -> None:
    code = """
    use std::{thread, time};
    fn main() {
        let sleep_duration = time::Duration::from_millis(200);
        thread::sleep(sleep_duration);
    }
    """
    result = run(client, language="rust", code=code, run_timeout=0.1, compile_timeout=1)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == TLE


def test_rust_assertion_error(client: httpx.Client) -> None:
    result = run(client, language="rust", code="\n    fn main() {\n        assert_eq!(1, 2);\n    }\n    ")
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED
    assert "assertion" in result["run_result"]["stderr"]


def test_rust_compile_error(client: httpx.Client) -> None:
    code = '\n    fn main() {\n        let x: u32 = "Hello, world!";\n        println!("{}", x);\n    }\n    '
    result = run(client, language="rust", code=code)
    assert result["status"] == FAILED, result
    assert result["compile_result"]["status"] == FINISHED
    assert result["compile_result"]["return_code"] != 0
    assert result["run_result"] is None


def test_rust_stdin(client: httpx.Client) -> None:
    code = """
    use std::io;
    fn main() {
        let mut input = String::new();
        io::stdin().read_line(&mut input).expect("Failed to read line");
        let num: i32 = input.trim().parse().expect("Invalid input");
        println!("{}", num);
    }
    """
    result = run(client, language="rust", code=code, stdin="65535")
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED
    assert result["run_result"]["stdout"] == "65535\n"


# ------------------------------------------------------------------ passk's own promises on /run_code


def test_unknown_language_lists_the_supported_ones(client: httpx.Client) -> None:
    response = client.post("/run_code", json={"code": "x", "language": "cobol"})
    assert response.status_code == 422
    for name in ("python", "cpp", "nodejs", "typescript", "go", "java", "rust", "ruby"):
        assert name in response.text


def test_long_output_is_whole_and_limits_are_reported(client: httpx.Client) -> None:
    lines = "\n".join(str(i) for i in range(20_000)) + "\n"
    result = run(client, language="python", code="for i in range(20000): print(i)", memory_limit_MB=1 << 20)
    assert result["status"] == SUCCESS and result["run_result"]["stdout"] == lines
    assert "memory_limit_MB 1048576 brought to" in result["message"]


def test_file_is_defined_and_tracebacks_are_the_programs(client: httpx.Client) -> None:
    result = run(client, language="python", code="import os\nprint(os.path.basename(__file__))\n1/0")
    assert result["run_result"]["stdout"] == "main.py\n"
    assert "ZeroDivisionError" in result["run_result"]["stderr"] and "passk" not in result["run_result"]["stderr"]


def test_a_spinning_program_is_stopped_at_its_limit(client: httpx.Client) -> None:
    result = run(client, language="cpp", code="int main() { volatile unsigned long i = 0; for (;;) i++; }",
                 run_timeout=1)
    assert result["status"] == FAILED and result["run_result"]["status"] == TLE


# ------------------------------------------------------------------ SandboxFusion's tests: pytest

PYTEST_CODE = r'''
def word_count(file_path):
    try:
        with open(file_path, 'r', encoding='utf-8') as file:
            content = file.read()
        translator = str.maketrans("", "", string.punctuation)
        content = content.translate(translator).lower()
        words = content.split()
        word_counter = Counter(words)
        sorted_word_count = sorted(word_counter.items(), key=lambda x: x[1], reverse=True)
        for word, count in sorted_word_count:
            print(f"'{word}': {count}")
    except FileNotFoundError:
        print(f"Error: File '{file_path}' not found.")

import string
from collections import Counter


class Testword_count:
    def test_word_count_case_sensitive_file(self, capfd, tmp_path):
        file_path = tmp_path / 'test_case_sensitive.txt'
        with open(file_path, 'w', encoding='utf-8') as file:
            file.write("Case case CASE")
        word_count(file_path)
        captured = capfd.readouterr()
        assert "'case': 3" {negation}in captured.out

    def test_word_count_punctuation_file(self, capfd, tmp_path):
        file_path = tmp_path / 'test_punctuation.txt'
        with open(file_path, 'w', encoding='utf-8') as file:
            file.write("This sentence has some punctuation, like commas and periods.")
        word_count(file_path)
        captured = capfd.readouterr()
        assert "'this': 1\n'sentence': 1\n'has': 1\n'some': 1\n'punctuation': 1\n'like': 1\n'commas': 1\n'and': 1\n'periods': 1\n" {negation}in captured.out
'''


def test_pytest_pass(client: httpx.Client) -> None:
    code = PYTEST_CODE.replace("{negation}", "")
    assert run(client, language="python", code=code, run_timeout=5)["status"] == SUCCESS
    result = run(client, language="pytest", code=code, run_timeout=5)
    assert result["status"] == SUCCESS, result
    assert "2 passed" in result["run_result"]["stdout"]


def test_pytest_fail(client: httpx.Client) -> None:
    code = PYTEST_CODE.replace("{negation}", "not ")
    assert run(client, language="python", code=code, run_timeout=5)["status"] == SUCCESS
    result = run(client, language="pytest", code=code, run_timeout=5)
    assert result["status"] == FAILED and result["run_result"]["status"] == FINISHED, result
    assert "2 failed" in result["run_result"]["stdout"]


PYTEST_TWO = """
def test_one():
    assert 1 + 1 == 2

def test_two():
    assert 1 + 1 == 3
"""


def test_pytest_args_reach_pytests_command_line(client: httpx.Client) -> None:
    """SandboxFusion's `args`: pytest's own options, after passk's; a report pytest writes comes back by fetch_files."""
    assert run(client, language="pytest", code=PYTEST_TWO, run_timeout=10)["status"] == FAILED
    chosen = run(client, language="pytest", code=PYTEST_TWO, run_timeout=10, args=["-k", "test_one"],
                 fetch_files=["report.xml"], files={})
    assert chosen["status"] == SUCCESS, chosen
    assert "1 passed, 1 deselected" in chosen["run_result"]["stdout"]
    reported = run(client, language="pytest", code=PYTEST_TWO, run_timeout=10, args=["--junitxml=report.xml"],
                   fetch_files=["report.xml"])
    assert reported["status"] == FAILED, reported
    report = base64.b64decode(reported["files"]["report.xml"]).decode()
    assert 'tests="2"' in report and 'failures="1"' in report and "test_two" in report


def test_args_of_another_language_are_ignored_and_said(client: httpx.Client) -> None:
    result = run(client, language="python", code="import sys; print(sys.argv[1:])", run_timeout=5, args=["-x"])
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["stdout"].strip() == "[]"
    assert "args ignored: python takes none (only pytest does)" in result["message"]


def test_an_argument_with_a_nul_byte_is_refused(client: httpx.Client) -> None:
    response = client.post("/run_code", json={"language": "pytest", "code": PYTEST_TWO, "args": ["-k\u0000x"]})
    assert response.status_code == 422, response.text
    assert "args" in response.text


# ------------------------------------------------------------------ go_test (SandboxFusion has no test of its own)

GO_TEST = """package main

import "testing"

func Add(a, b int) int { return a %s b }

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %%d, want 5", got)
	}
}
"""


def test_go_test_pass_fail_and_compile_error(client: httpx.Client) -> None:
    passes = run(client, language="go_test", code=GO_TEST % "+")
    assert passes["status"] == SUCCESS and passes["compile_result"]["return_code"] == 0, passes
    assert "PASS" in passes["run_result"]["stdout"]
    fails = run(client, language="go_test", code=GO_TEST % "-")
    assert fails["status"] == FAILED and fails["run_result"]["status"] == FINISHED, fails
    assert "--- FAIL: TestAdd" in fails["run_result"]["stdout"] and "Add(2, 3) = -1" in fails["run_result"]["stdout"]
    broken = run(client, language="go_test", code=GO_TEST % "+ (")
    assert broken["status"] == FAILED and broken["run_result"] is None, broken
    assert broken["compile_result"]["return_code"] != 0


# ------------------------------------------------------------------ junit (JUnit 5 tests, a public class of any name)

JUNIT_TEST = """import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;

public class CalculatorTest {
    static int add(int a, int b) { return a %s b; }

    @Test
    void addsTwoNumbers() {
        assertEquals(5, add(2, 3));
    }
}
"""


def test_junit_pass_fail_and_compile_error(client: httpx.Client) -> None:
    passes = run(client, language="junit", code=JUNIT_TEST % "+", run_timeout=20, compile_timeout=30)
    assert passes["status"] == SUCCESS and passes["compile_result"]["return_code"] == 0, passes
    assert "1 tests successful" in passes["run_result"]["stdout"], passes
    fails = run(client, language="junit", code=JUNIT_TEST % "-", run_timeout=20, compile_timeout=30)
    assert fails["status"] == FAILED and fails["run_result"]["status"] == FINISHED, fails
    assert "1 tests failed" in fails["run_result"]["stdout"] and "expected: <5> but was: <-1>" in fails["run_result"]["stdout"]
    broken = run(client, language="junit", code=JUNIT_TEST % "+ (", run_timeout=20, compile_timeout=30)
    assert broken["status"] == FAILED and broken["run_result"] is None, broken
    assert broken["compile_result"]["return_code"] != 0


# ------------------------------------------------------------------ SandboxFusion's tests: jest

# SandboxFusion's test_jest.py programs (its comments left out): a correct function, then one that returns 0.
JEST_CODE = """
import { describe, expect, test } from '@jest/globals';

function MinSubArrayLen(target: number, nums: number[]): number {
%s
}

describe('MinSubArrayLen', () => {
    test('finds minimum length of a subarray with sum >= target', () => {
        expect(MinSubArrayLen(7, [2, 3, 1, 2, 4, 3])).toBe(2);
        expect(MinSubArrayLen(15, [1, 2, 3, 4, 5])).toBe(5);
        expect(MinSubArrayLen(4, [1, 4, 4])).toBe(1);
        expect(MinSubArrayLen(11, [1, 1, 1, 1, 1, 1, 1, 1])).toBe(0);
    });

    test('returns 0 if no such subarray exists', () => {
        expect(MinSubArrayLen(100, [1, 2, 3, 4, 5])).toBe(0);
        expect(MinSubArrayLen(7, [2, 1])).toBe(0);
    });

    test('works with single element array', () => {
        expect(MinSubArrayLen(3, [3])).toBe(1);
        expect(MinSubArrayLen(3, [1])).toBe(0);
    });
});
"""
MIN_SUB_ARRAY_LEN = """    let n = nums.length;
    let minLength = Infinity;
    let sum = 0;
    let start = 0;

    for (let end = 0; end < n; end++) {
        sum += nums[end];

        while (sum >= target) {
            minLength = Math.min(minLength, end - start + 1);
            sum -= nums[start];
            start++;
        }
    }

    return minLength === Infinity ? 0 : minLength;"""


def test_jest_pass(client: httpx.Client) -> None:
    result = run(client, language="jest", code=JEST_CODE % MIN_SUB_ARRAY_LEN, run_timeout=10)
    assert result["status"] == SUCCESS, result
    assert result["run_result"]["status"] == FINISHED and result["run_result"]["return_code"] == 0
    assert "Tests:       3 passed, 3 total" in result["run_result"]["stderr"]


def test_jest_fail(client: httpx.Client) -> None:
    result = run(client, language="jest", code=JEST_CODE % "    return 0", run_timeout=10)
    assert result["status"] == FAILED, result
    assert result["run_result"]["status"] == FINISHED and result["run_result"]["return_code"] != 0
    assert "Tests:       2 failed, 1 passed, 3 total" in result["run_result"]["stderr"]


JEST_ADD = """function add(a: number, b: number): number { return %s; }
test('adds', () => { expect(add(2, 3)).toBe(5); });
"""


def test_jest_syntax_and_type_errors_and_a_loop_end_as_in_sandboxfusion(client: httpx.Client) -> None:
    """Babel strips TypeScript's types without checking them (SandboxFusion's set-up): a type error alone passes,
    a syntax error fails the test suite; neither has a compile step. A test that never ends is a timeout."""
    programs = {  # (code, run_timeout)
        "type error": ("const three: number = 'three';\n" + JEST_ADD % "a + b", 10),
        "syntax error": (JEST_ADD % "a + (b", 10),
        "loop": ("test('never ends', () => { for (;;) {} });\n", 3),
    }
    with ThreadPoolExecutor(len(programs)) as pool:
        results = dict(zip(programs, pool.map(lambda job: run(client, language="jest", code=job[0], run_timeout=job[1]),
                                              programs.values())))
    typed, broken, looping = results["type error"], results["syntax error"], results["loop"]
    assert typed["status"] == SUCCESS and typed["compile_result"] is None, typed
    assert broken["status"] == FAILED and broken["compile_result"] is None, broken
    assert broken["run_result"]["status"] == FINISHED and broken["run_result"]["return_code"] == 1
    assert "Test suite failed to run" in broken["run_result"]["stderr"] and "SyntaxError" in broken["run_result"]["stderr"]
    assert looping["status"] == FAILED and looping["run_result"]["status"] == TLE, looping


def test_test_framework_modes_are_not_dataset_languages(client: httpx.Client) -> None:
    problem = {"id": "p", "prompt": "", "entry_point": "f", "test": "def check(candidate):\n    pass\n"}
    response = client.post("/v1/datasets", json={"name": "modes", "language": "python-pytest", "problems": [problem]})
    assert response.status_code == 422, response.text


# ------------------------------------------------------------------ verl's reward, only its URL changed

# A faithful copy of verl's client (volcengine/verl, verl/utils/reward_score/sandbox_fusion/utils.py:
# `call_sandbox_api` and the status mapping of `_process_single_case`), kept to what decides the reward; verl itself
# is not installed (its dependencies are a training stack).
VERL_API_TIMEOUT = 10
VERL_MAX_RETRIES = 3


def verl_call_sandbox_api(url: str, code: str, stdin: str, compile_timeout: int, run_timeout: int,
                          language: str) -> tuple[dict | None, str | None]:
    payload = json.dumps({"compile_timeout": compile_timeout, "run_timeout": run_timeout, "code": code,
                          "stdin": stdin, "language": language, "files": {}, "fetch_files": []})
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    last_error = None
    for attempt in range(VERL_MAX_RETRIES):
        try:
            response = requests.post(url, headers=headers, data=payload,
                                     timeout=compile_timeout + run_timeout + VERL_API_TIMEOUT)
            if response.status_code == 504:
                last_error = "Gateway Timeout (504)"
                if attempt < VERL_MAX_RETRIES - 1:
                    time.sleep(attempt + 1)
                continue
            response.raise_for_status()
            return response.json(), None
        except requests.exceptions.RequestException as exc:
            last_error = f"API Request Error: {exc}"
            break
    return None, last_error


def verl_process_single_case(stdin_data: Any, expected_output: Any, url: str, generation: str, timeout: int,
                             language: str) -> int | bool:
    api_response, error_msg = verl_call_sandbox_api(url, generation, str(stdin_data), timeout, timeout, language)
    if error_msg or not api_response:
        return -1
    status = api_response.get("status")
    compile_result, run_result = api_response.get("compile_result"), api_response.get("run_result")
    if status == "SandboxError":
        return -1
    if status == "Failed":
        compile_status = compile_result.get("status") if compile_result else None
        if compile_result and (compile_status in ("Error", "TimeLimitExceeded")
                               or (compile_status == "Finished" and compile_result.get("return_code") != 0)):
            return -4
        if run_result:
            run_status = run_result.get("status")
            if run_status == "TimeLimitExceeded":
                return -3
            if run_status == "Error" or (run_status == "Finished" and run_result.get("return_code") != 0):
                return -2
        return -1
    if status == "Success":
        if run_result and run_result.get("status") == "Finished":
            actual = run_result.get("stdout") if run_result.get("stdout") is not None else ""
            return str(actual).rstrip("\n") == str(expected_output).rstrip("\n")
        return -1
    return -1


# (correct, wrong, loop, sleep, syntax error, runtime error, stdin sum) per language; the first two read n, print 2n.
PROGRAMS: dict[str, tuple[str, ...]] = {
    "python": (
        "n = int(input())\nprint(2 * n)", "n = int(input())\nprint(n + 1)", "while True: pass",
        "import time\ntime.sleep(30)", "def f(:\n    pass", "raise ValueError('boom')",
        "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))",
    ),
    "cpp": (
        "#include <iostream>\nint main() { long n; std::cin >> n; std::cout << 2 * n << \"\\n\"; }",
        "#include <iostream>\nint main() { long n; std::cin >> n; std::cout << n + 1 << \"\\n\"; }",
        "int main() { volatile unsigned long i = 0; for (;;) i++; }",
        "#include <unistd.h>\nint main() { sleep(30); }",
        "int main( { return 0; }",
        "#include <cstdlib>\nint main() { std::abort(); }",
        "#include <iostream>\nint main() { long s = 0, x; while (std::cin >> x) s += x; std::cout << s << \"\\n\"; }",
    ),
    "java": (
        "import java.util.*;\npublic class Main { public static void main(String[] a) { "
        "long n = new Scanner(System.in).nextLong(); System.out.println(2 * n); } }",
        "import java.util.*;\npublic class Main { public static void main(String[] a) { "
        "long n = new Scanner(System.in).nextLong(); System.out.println(n + 1); } }",
        "public class Main { public static void main(String[] a) { long i = 0; while (true) { i++; } } }",
        "public class Main { public static void main(String[] a) throws Exception { Thread.sleep(30000); } }",
        "public class Main { public static void main(String[] a) { int x = ; } }",
        "public class Main { public static void main(String[] a) { throw new RuntimeException(\"boom\"); } }",
        "import java.util.*;\npublic class Main { public static void main(String[] a) { Scanner s = new Scanner(System.in);"
        " long t = 0; while (s.hasNextLong()) t += s.nextLong(); System.out.println(t); } }",
    ),
    "nodejs": (
        "const n = parseInt(require('fs').readFileSync(0, 'utf8'));\nconsole.log(2 * n);",
        "const n = parseInt(require('fs').readFileSync(0, 'utf8'));\nconsole.log(n + 1);",
        "for (;;) {}", "setTimeout(() => {}, 30000);", "function f( {", "throw new Error('boom');",
        "console.log(require('fs').readFileSync(0, 'utf8').split(/\\s+/).filter(Boolean).map(Number)"
        ".reduce((a, b) => a + b, 0));",
    ),
    "typescript": (
        "declare const require: any;\nconst n: number = parseInt(require('fs').readFileSync(0, 'utf8'));\n"
        "console.log(2 * n);",
        "declare const require: any;\nconst n: number = parseInt(require('fs').readFileSync(0, 'utf8'));\n"
        "console.log(n + 1);",
        "for (;;) {}", "setTimeout(() => {}, 30000);", "let x: number = ;", "throw new Error('boom');",
        "declare const require: any;\nconst words: string[] = require('fs').readFileSync(0, 'utf8').split(/\\s+/);\n"
        "console.log(words.filter(Boolean).map(Number).reduce((a, b) => a + b, 0));",
    ),
    "go": (
        "package main\nimport \"fmt\"\nfunc main() { var n int64; fmt.Scan(&n); fmt.Println(2 * n) }",
        "package main\nimport \"fmt\"\nfunc main() { var n int64; fmt.Scan(&n); fmt.Println(n + 1) }",
        "package main\nfunc main() { for {} }",
        "package main\nimport \"time\"\nfunc main() { time.Sleep(30 * time.Second) }",
        "package main\nfunc main() {",
        "package main\nfunc main() { panic(\"boom\") }",
        "package main\nimport \"fmt\"\nfunc main() { var s, x int64; for { if _, err := fmt.Scan(&x); err != nil "
        "{ break }; s += x }; fmt.Println(s) }",
    ),
    "rust": (
        "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); "
        "let n: i64 = s.trim().parse().unwrap(); println!(\"{}\", 2 * n); }",
        "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); "
        "let n: i64 = s.trim().parse().unwrap(); println!(\"{}\", n + 1); }",
        "fn main() { let mut i: u64 = 1; loop { i = i.wrapping_mul(3); if i == 0 { println!(\"{}\", i); } } }",
        "fn main() { std::thread::sleep(std::time::Duration::from_secs(30)); }",
        "fn main() { let x = ; }",
        "fn main() { panic!(\"boom\"); }",
        "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap(); "
        "let t: i64 = s.split_whitespace().map(|w| w.parse::<i64>().unwrap()).sum(); println!(\"{}\", t); }",
    ),
    "ruby": (
        "n = gets.to_i\nputs 2 * n", "n = gets.to_i\nputs n + 1", "loop {}", "sleep 30", "def f(\n",
        "raise 'boom'", "puts STDIN.read.split.map(&:to_i).sum",
    ),
}
PROGRAMS.update({
    "python-science": PROGRAMS["python"],
    "lua": (
        "local n = io.read('n')\nprint(2 * n)", "local n = io.read('n')\nprint(n + 1)", "while true do end",
        "os.execute('sleep 30')", "function f(", "error('boom')",
        "local s = 0\nfor x in io.read('a'):gmatch('%S+') do s = s + tonumber(x) end\nprint(s)",
    ),
    "php": (
        "<?php $n = (int) trim(fgets(STDIN)); echo 2 * $n, \"\\n\";",
        "<?php $n = (int) trim(fgets(STDIN)); echo $n + 1, \"\\n\";",
        "<?php while (true) {}", "<?php sleep(30);", "<?php function f( {", "<?php throw new Exception('boom');",
        "<?php echo array_sum(array_map('intval', preg_split('/\\s+/', trim(stream_get_contents(STDIN))))), \"\\n\";",
    ),
    "perl": (
        "my $n = <STDIN>; print 2 * $n, \"\\n\";", "my $n = <STDIN>; print $n + 1, \"\\n\";", "1 while 1;",
        "sleep 30;", "sub f {", "die 'boom';",
        "my $s = 0; $s += $_ for split ' ', do { local $/; <STDIN> }; print \"$s\\n\";",
    ),
    "bash": (
        "read n; echo $((2 * n))", "read n; echo $((n + 1))", "while :; do :; done", "sleep 30", "f() {",
        "set -e; false", "s=0; for x in $(cat); do s=$((s + x)); done; echo $s",
    ),
    "R": (
        "n <- as.integer(readLines(file('stdin'), n = 1))\ncat(2 * n, '\\n', sep = '')",
        "n <- as.integer(readLines(file('stdin'), n = 1))\ncat(n + 1, '\\n', sep = '')",
        "repeat {}", "Sys.sleep(30)", "f <- function(", "stop('boom')",
        "x <- scan(file('stdin'), quiet = TRUE)\ncat(sum(x), '\\n', sep = '')",
    ),
    "elixir": (
        "n = IO.gets(\"\") |> String.trim() |> String.to_integer()\nIO.puts(2 * n)",
        "n = IO.gets(\"\") |> String.trim() |> String.to_integer()\nIO.puts(n + 1)",
        "Stream.repeatedly(fn -> 1 end) |> Stream.run()", "Process.sleep(30_000)", "def f(", "raise \"boom\"",
        "IO.read(:stdio, :eof) |> String.split() |> Enum.map(&String.to_integer/1) |> Enum.sum() |> IO.puts()",
    ),
    "racket": (
        "#lang racket/base\n(define n (read))\n(displayln (* 2 n))",
        "#lang racket/base\n(define n (read))\n(displayln (+ n 1))",
        "#lang racket/base\n(let loop () (loop))", "#lang racket/base\n(sleep 30)",
        "#lang racket/base\n(define (f", "#lang racket/base\n(error 'boom \"no\")",
        "#lang racket/base\n(let loop ([s 0]) (define x (read)) (if (eof-object? x) (displayln s) (loop (+ s x))))",
    ),
    "csharp": (
        "class P { static void Main() { long n = long.Parse(System.Console.ReadLine()); "
        "System.Console.WriteLine(2 * n); } }",
        "class P { static void Main() { long n = long.Parse(System.Console.ReadLine()); "
        "System.Console.WriteLine(n + 1); } }",
        "class P { static void Main() { long i = 0; while (true) { i++; } } }",
        "class P { static void Main() { System.Threading.Thread.Sleep(30000); } }",
        "class P { static void Main() { int x = ; } }",
        "class P { static void Main() { throw new System.Exception(\"boom\"); } }",
        "using System; using System.Linq;\nclass P { static void Main() { Console.WriteLine(Console.In.ReadToEnd()"
        ".Split((char[]) null, StringSplitOptions.RemoveEmptyEntries).Select(long.Parse).Sum()); } }",
    ),
    "D_ut": (
        "import std.stdio, std.conv, std.string;\nvoid main() { writeln(2 * readln.strip.to!long); }",
        "import std.stdio, std.conv, std.string;\nvoid main() { writeln(readln.strip.to!long + 1); }",
        "void main() { long i = 0; while (true) { i++; } }",
        "import core.thread, core.time;\nvoid main() { Thread.sleep(dur!\"seconds\"(30)); }",
        "void main() { int x = ; }", "void main() { throw new Exception(\"boom\"); }",
        "import std.stdio, std.algorithm, std.array, std.conv;\n"
        "void main() { writeln(stdin.byLine.map!(l => l.split.map!(to!long).sum).sum); }",
    ),
    "ocaml": (
        "let () = Scanf.scanf \" %d\" (fun n -> Printf.printf \"%d\\n\" (2 * n))",
        "let () = Scanf.scanf \" %d\" (fun n -> Printf.printf \"%d\\n\" (n + 1))",
        "let () = while true do () done", "let () = ignore (Sys.command \"sleep 30\")", "let () = print_int \"x\"",
        "let () = failwith \"boom\"",
        "let () = let s = ref 0 in (try while true do Scanf.scanf \" %d\" (fun x -> s := !s + x) done with _ -> ());"
        " Printf.printf \"%d\\n\" !s",
    ),
    "haskell": (
        "main :: IO ()\nmain = getLine >>= print . (* 2) . (read :: String -> Int)",
        "main :: IO ()\nmain = getLine >>= print . (+ 1) . (read :: String -> Int)",
        "main :: IO ()\nmain = print (length [1 ..])",
        "import Control.Concurrent (threadDelay)\nmain :: IO ()\nmain = threadDelay 30000000",
        "main :: IO ()\nmain = putStrLn (1 :: Int)", "main :: IO ()\nmain = error \"boom\"",
        "main :: IO ()\nmain = getContents >>= print . sum . map (read :: String -> Int) . words",
    ),
    "clojure": (
        "(require '[clojure.string :as str])\n(println (* 2 (Long/parseLong (str/trim (read-line)))))",
        "(require '[clojure.string :as str])\n(println (+ 1 (Long/parseLong (str/trim (read-line)))))",
        "(loop [] (recur))", "(Thread/sleep 30000)", "(defn f [", "(throw (Exception. \"boom\"))",
        "(require '[clojure.string :as str])\n"
        "(println (reduce + (map #(Long/parseLong %) (str/split (str/trim (slurp *in*)) #\"\\s+\"))))",
    ),
    "scala": (
        "object Main extends App {\n  println(2 * scala.io.StdIn.readLine().trim.toLong)\n}",
        "object Main extends App {\n  println(scala.io.StdIn.readLine().trim.toLong + 1)\n}",
        "object Main extends App {\n  var i = 0L\n  while (true) { i += 1 }\n}",
        "object Main extends App {\n  Thread.sleep(30000)\n}",
        "object Main extends App {\n  val x: Int = \n}",
        "object Main extends App {\n  throw new RuntimeException(\"boom\")\n}",
        "object Main extends App {\n  println(scala.io.Source.stdin.getLines().flatMap(_.trim.split(\" \"))"
        ".filter(_.nonEmpty).map(_.toLong).sum)\n}",
    ),
})
INTERPRETED = {"python", "python-science", "nodejs", "ruby", "lua", "php", "perl", "bash", "R", "elixir", "racket",
               "clojure"}
# verl's one timeout (compile and run alike) where a language's compiler or runtime start (a JVM, R) needs more
# than 5 s on a busy machine.
TIMEOUT_S = {"haskell": 20, "csharp": 10, "D_ut": 10, "clojure": 10, "scala": 20, "R": 15}
CASES = ("correct", "wrong", "loop", "sleep", "syntax_error", "runtime_error", "stdin")


def _expected(language: str, case: str) -> int | bool:
    return {"correct": True, "wrong": False, "loop": -3, "sleep": -3, "runtime_error": -2, "stdin": True,
            "syntax_error": -2 if language in INTERPRETED else -4}[case]


def _basic_url(stack: LocalStack) -> str:
    parts = urlsplit(stack.api_url)
    return urlunsplit((parts.scheme, f"passk:{stack.api_key}@{parts.netloc}", "/run_code", "", ""))


def test_verl_programs_cover_every_language() -> None:
    """Every language on /run_code; its test-framework modes (pytest, go_test, junit, jest) are tested above."""
    known = run_code_names(Settings())
    assert set(PROGRAMS) == {name for name, language in known.items() if not language.run_code_only}


@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_verl_reward_through_basic_credentials_in_the_url(stack: LocalStack, language: str) -> None:
    ensure_language_image(docker.from_env(), run_code_names(Settings())[language])  # see stack()
    url = _basic_url(stack)
    jobs = []
    for case, code in zip(CASES, PROGRAMS[language], strict=True):
        stdin, expected_output = ("1 2 3\n4\n", "10") if case == "stdin" else ("21\n", "42")
        jobs.append((case, stdin, expected_output, code))
    # verl sends a sample's cases concurrently (check_correctness), its timeout shared by compile and run.
    with ThreadPoolExecutor(4) as pool:
        rewards = list(pool.map(
            lambda job: verl_process_single_case(job[1], job[2], url, job[3], TIMEOUT_S.get(language, 5), language),
            jobs))
    got = {case: reward for (case, *_), reward in zip(jobs, rewards, strict=True)}
    assert got == {case: _expected(language, case) for case in CASES}


def test_sleeping_programs_do_not_hold_back_a_trivial_one(client: httpx.Client) -> None:
    """More programs than the worker's threads sleep at once (4 threads and the interactive sandboxes); a trivial
    program sent after them is answered while every one of them still sleeps."""
    with ThreadPoolExecutor(6) as pool:
        sleepers = [pool.submit(run, client, language="python", code=f"import time\ntime.sleep(600)  # {i}",
                                run_timeout=40) for i in range(6)]
        trivial = run(client, language="python", code="print('awake')")
        assert trivial["run_result"]["stdout"] == "awake\n"
        assert not any(sleeper.done() for sleeper in sleepers)
        statuses = [sleeper.result()["run_result"]["status"] for sleeper in sleepers]
        assert statuses == [TLE] * len(sleepers)
