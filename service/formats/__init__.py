"""Problem formats: how each kind of problem becomes a self-checking program, and how rows load.

| format      | from                              | the program                                                     |
|-------------|-----------------------------------|-----------------------------------------------------------------|
| `humaneval` | HumanEval rows                    | judge: prompt + test + `check(entry_point)`; candidate: prompt + completion |
| `mbpp`      | MBPP rows (`text`, `test_list`)   | judge: test_setup_code + the asserts; candidate: setup + completion |
| `stdio`     | APPS, CodeContests, LiveCodeBench | the driver feeds each case on stdin, compares stdout            |
| `call`      | APPS `fn_name`, LiveCodeBench     | the driver calls `fn_name(*input)`, compares the result         |
| `humaneval-x` | HumanEval-X rows (any language but Python) | prompt + completion + "\n" + test, compiled; exit 0 + pass token |
| `multipl-e` | MultiPL-E rows (any language but Python) | prompt + completion + "\n" + tests, compiled; exit 0 + pass token |

Each format is one module defining `FORMAT` (service/formats/registry.py): its problem model, row shapes,
columns and program.

The candidate's code never runs in the process that judges it: trusted_tests.py
(HumanEval, MBPP) calls it in a child process over a pipe, driver.py (stdio,
call) runs each case in a child. Every program passes only by returning
normally (see sandbox/runtime/supervisor.py).
Comparison policies are documented in sandbox/runtime/compare.py; the judges are sandbox/runtime/trusted_tests.py and driver.py.
"""
