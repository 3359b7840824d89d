# passk's server in the candidate's process (installed as /opt/passk/bash/server.sh; `BASH_ENV` makes `bash main.sh`
# source it before the first line of the model's code). The candidate's program is the original program's text up
# to the tests (the prompt and the model's completion, with the function closed as the tests' first line closes
# it), followed by one line that passk adds:
#
#     passk_serve name
#
# so the function is served exactly where the tests would have started in one program, after every top-level
# command of the model's code. The server reads calls on descriptor 3 and answers each on descriptor 4 with what the
# function printed on stdout, every byte, and its exit status. Each call runs as MultiPL-E's tests run it, as
# `$(candidate ...)` does: in a subshell, with `set -e` off there as Bash turns it off in a command substitution,
# and stdin as the program's. So `exit` in the function ends that call only, and nothing a call sets outlives it.
# The function's stderr is the program's. A call that runs Bash out of memory (`xrealloc: cannot allocate N bytes`)
# or out of CPU time ends the program, whose memory and time it used.
#
# When the judge closes its end, passk_serve returns and the program runs on to its end. The server is the
# candidate's own: the model's code may change anything in this process, and so anything the server sends. The
# judge trusts none of it (judge.sh, values.py).

. /opt/passk/bash/wire.sh

passk_serve() {
    local - name=$1 spool message output errors status
    set +e
    [[ -z ${PASSK_SERVING-} ]] || return 0
    PASSK_SERVING=1
    { : <&3; } 2>/dev/null || return 0
    spool=$(mktemp -d) || exit 70
    message=$spool/call output=$spool/output errors=$spool/errors
    while :; do
        passk_read_frame 3 "$message"
        status=$?
        if ((status == 1)); then break; fi
        # Only the judge writes calls: a call it did not mean is passk's own failure.
        if ((status != 0)); then exit 70; fi
        passk_read_call "$message" || exit 70
        [[ $PASSK_NAME == "$name" ]] || exit 70
        (set +e; "$name" "${PASSK_ARGS[@]}") >"$output" 2>"$errors"
        status=$?
        cat "$errors" >&2
        if grep -qE 'cannot allocate [0-9]+ bytes|fork: Cannot allocate memory' "$errors"; then exit 2; fi
        # The call used up the CPU time of the program (RLIMIT_CPU, SIGXCPU): so has the program.
        if ((status == 128 + 24)); then trap - XCPU; kill -XCPU $$; fi
        passk_write_answer 4 "$output" "$status" || break
    done
    rm -rf "$spool"
    exec 3<&- 4>&-
}
