# The judge's runtime for Bash (installed as /opt/passk/bash/judge.sh): the entry point of the judge's process,
# `bash judge.sh` in the judge's directory. It holds none of the model's code.
#
# It sources the tests (main.sh: the prompt's code before the function to complete, a stub for that function, the
# problem's tests) and reports PASS on descriptor 3 once they ran to their end (or ended with `exit 0`, as a program
# whose tests passed does). MultiPL-E's tests run under `set -e`: the first check that fails ends them with its
# status, which fails the sample, with the check on stderr (`passk: a test failed: ...`).
#
# A stub's call (passk_call) sends the arguments to the candidate's process (descriptor 4), reads the answer
# (descriptor 5): it prints the function's stdout, every byte, and returns its exit status, so `$(candidate ...)`
# in the tests sees exactly what it sees in one program. How a call ends the tests instead (report.py): the
# candidate's process ended or closed its channel (ENDED), or it sent anything but one well-formed answer
# (BROKEN). Data the candidate wrote unasked is looked for before each call, before PASS (there it is BROKEN), and
# as failing tests end (FLAG out_of_turn). A call runs where the tests call it, usually in the subshell of a command
# substitution: a report written there ends the whole judge (its process is killed once the report is written).

. /opt/passk/bash/wire.sh

trap '' PIPE
PASSK_JUDGE=$$
PASSK_PASSED=
PASSK_SPOOL=$(mktemp -d)

# True if the candidate's process wrote anything no call asked for (one byte of it is consumed). An end of input is
# not data: the next call sees the candidate gone.
passk_unasked() {
    local - count
    set +e
    read -r -t 0 -u 5 || return 1
    count=$(head -c 1 <&5 | wc -c)
    ((count > 0))
}

# Unasked data, looked for as failing tests end: the calls are closed, so an honest server returns and its process
# ends (end of input on the replies); whatever arrives before that, or within 0.1 s, is unasked.
passk_surplus() {
    local - count
    set +e
    exec 4>&-
    count=$(timeout 0.1 head -c 1 <&5 | wc -c)
    ((count > 0))
}

passk_report() {
    printf '%s' "$1" >&3
}

# End the tests with $1 as the report (its last line is the outcome: report.py), from wherever the call runs.
passk_finish() {
    local -
    set +e
    PASSK_PASSED=reported
    if passk_surplus; then passk_report $'FLAG out_of_turn\n'; fi
    passk_report "$1"
    kill -KILL "$PASSK_JUDGE"
    exit 1
}

# The stubs' call: function $1 with the arguments $2... as the tests passed them.
passk_call() {
    local - name=$1 message status
    set +e
    shift
    if passk_unasked; then passk_finish "BROKEN $name(): the program wrote on its channel before the call"; fi
    passk_write_call 4 "$name" "$@" || passk_finish ENDED
    message=$PASSK_SPOOL/answer.$BASHPID
    passk_read_frame 5 "$message"
    status=$?
    if ((status == 1)); then passk_finish ENDED; fi
    if ((status == 2)); then passk_finish "BROKEN $name(): a message cut short or over 1 GiB"; fi
    passk_read_answer "$message" || passk_finish "BROKEN $name(): not an answer"
    tail -c +12 "$message" | head -c "$PASSK_OUTPUT_SIZE"
    status=$PASSK_STATUS
    rm -f "$message"
    return "$status"
}

# After the tests: the only way to a pass. (Only what is there already: waiting for the candidate's process to end
# would cost every pass its exit.)
passk_pass() {
    set +e
    if passk_unasked; then passk_finish 'BROKEN the program wrote on its channel after its last answer'; fi
    PASSK_PASSED=yes
    passk_report PASS
    exit 0
}

# How the tests' shell ends: after passk_pass, as it was; `exit 0` of the tests, as passed; else a failed check.
passk_ended() {
    local status=$?
    set +e
    if [[ -n $PASSK_PASSED ]]; then exit "$status"; fi
    if ((status == 0)); then passk_pass; fi
    printf 'passk: a test failed: the tests exited with status %s%s\n' "$status" "${PASSK_CHECK:+ at: $PASSK_CHECK}" >&2
    PASSK_PASSED=failed
    if passk_surplus; then passk_report $'FLAG out_of_turn\n'; fi
    exit 1
}
trap passk_ended EXIT
# The last command that failed (under the tests' `set -e`, the check that ends them), for the failure's detail.
set -E
trap 'PASSK_CHECK=$BASH_COMMAND' ERR

. ./main.sh
passk_pass
