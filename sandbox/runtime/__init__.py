"""The code that runs inside the sandbox container (standard library only).

Installed in the sandbox image as the package `passk_runtime` and imported by
PID 1 before anything else runs, so every process of a container shares it:

| module             | runs in                       | what it does                                          |
|--------------------|-------------------------------|-------------------------------------------------------|
| supervisor.py      | PID 1 (root, SETUID/SETGID)   | runs jobs one at a time, limits, clean-up, verdicts   |
| zygote.py          | the zygote (forked at start)  | forks candidate processes that never held any tests   |
| trusted_tests.py   | the judge (uid 10002)         | HumanEval/MBPP tests, calling the candidate by pipe   |
| driver.py          | the judge (uid 10002)         | stdin/stdout and call-based cases, compared here      |
| native.py          | PID 1, and the candidate (10001) | other languages: compile (cached), run, pass token, stdio cases |
| candidate.py       | a candidate (uid 10001)       | loads the model's code, answers calls / runs a case   |
| wire.py            | both sides                    | framing and the value codec (what may cross)          |
| compare.py         | the judge, and the host       | comparison policies for outputs and returned values   |
| failure.py         | the judge                     | what failed (assertion, case) as a record for the host |
| process.py         | PID 1 and the zygote          | uids, limits, clean-up after a program, cgroup figures |

The host imports compare.py and wire.py as `sandbox.runtime.*` (for
validation and tests); nothing here imports anything outside the package.
"""
