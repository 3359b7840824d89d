"""The code that runs inside the sandbox container (standard library only).

Installed in the sandbox image as the package `passk_runtime` and imported by
PID 1 before anything else runs, so every process of a container shares it:

| module             | runs in                       | what it does                                            |
|--------------------|-------------------------------|---------------------------------------------------------|
| job.py             | the host and PID 1            | the job a frame carries: its types, defaults, limits    |
| supervisor.py      | PID 1 (root, SETUID/SETGID)   | runs jobs one at a time, limits, clean-up, verdicts     |
| report.py          | PID 1 and every judge         | what a judge reports on its private pipe; the flags     |
| zygote.py          | the zygote (forked at start)  | forks Python candidates that never held any tests       |
| trusted_tests.py   | the judge (uid 10002)         | HumanEval/MBPP tests, calling the candidate by pipe     |
| live_judge.py      | PID 1 and the judge           | a tests judge kept for its problem's samples in a frame |
| judge_template.py  | the template (forked at start) | forks judges as PID 1's children; the judge's order    |
| driver.py          | the judge (uid 10002)         | stdin/stdout and call-based cases, compared here        |
| candidate.py       | a Python candidate (10001)    | loads the model's code, answers calls / runs a case     |
| wire.py            | Python judge and candidate    | framing and the Python value codec (what may cross)     |
| native.py          | PID 1                         | other languages: builds, judge and candidate, verdicts  |
| builds.py          | PID 1                         | compile cache, precompiled headers, compile verdicts    |
| steps.py           | PID 1                         | spawning and watching a process tree, reaping orphans   |
| values.py          | (the rule; tests)             | the value wire other languages implement, and its codec |
| seccomp.py         | PID 1 / the zygote, candidates | the monitor: attempts to reach the judge, flagged      |
| compare.py         | the judge, and the host       | comparison policies for outputs and returned values     |
| failure.py         | the judges                    | what failed (assertion, case) as a record for the host  |
| process.py         | PID 1 and the zygote          | uids, limits, clean-up after a program, cgroup figures  |

The host imports job.py, report.py, values.py, compare.py and wire.py as
`sandbox.runtime.*`; nothing here imports anything outside the package
(tests/test_layering.py checks it).
"""
