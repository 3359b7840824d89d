# The value wire (sandbox/runtime/values.py has the rule) for Bash: framing on descriptors and the few messages a
# Bash call needs. Installed in the Bash image as /opt/passk/bash/wire.sh; sourced by the judge (judge.sh) and by
# passk's server in the candidate's process (server.sh).
#
# A Bash function is called with strings (its arguments) and answers with what it printed and its exit status, so
# only these cross:
#   the call      'C' <string name> <u32 count> <count values s>     each argument as its bytes (no NUL: a Bash string
#                                                                    holds none)
#   the answer    'R' P 2 (s <its stdout, every byte> , B <its exit status, 0-255>)
# A message is held in a file, never in a variable (stdout may hold NUL bytes, which no Bash variable holds), and
# its numbers are read with od. Every function here keeps the caller's shell options as they were (`local -`) and
# never fails under `set -e`.

# \xHH escapes of a big-endian u32, in REPLY (for printf's format).
passk_u32() {
    printf -v REPLY '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255))
}

# Writes the call of function $2 with arguments $3... on descriptor $1, framed; fails if the other side is gone.
passk_write_call() {
    local - LC_ALL=C
    set +e
    local fd=$1 name=$2 format size arg
    shift 2
    passk_u32 ${#name}
    format="C$REPLY%s"
    size=$((1 + 4 + ${#name} + 4))
    passk_u32 $#
    format+=$REPLY
    for arg in "$@"; do
        passk_u32 ${#arg}
        format+="s$REPLY%s"
        size=$((size + 5 + ${#arg}))
    done
    passk_u32 $size
    printf "$REPLY$format" "$name" "$@" 2>/dev/null >&"$fd"
}

# The unsigned number of $3 bytes (1 or 4) at offset $2 of file $1, in REPLY.
passk_number() {
    local - value
    set +e
    if (($3 == 4)); then
        value=$(od -An -v -tu4 --endian=big -j "$2" -N 4 "$1")
    else
        value=$(od -An -v -tu1 -j "$2" -N 1 "$1")
    fi
    REPLY=$((value + 0))
}

# The size of file $1, in REPLY.
passk_size() {
    local - size
    set +e
    size=$(wc -c <"$1")
    REPLY=$((size + 0))
}

# Reads the next framed message on descriptor $1 into file $2. Status: 0 read, 1 a clean end of input before it,
# 2 malformed (cut short, or over 1 GiB).
passk_read_frame() {
    local - fd=$1 file=$2 size
    set +e
    head -c 4 <&"$fd" >"$file" 2>/dev/null
    passk_size "$file"
    if ((REPLY == 0)); then return 1; fi
    if ((REPLY < 4)); then return 2; fi
    passk_number "$file" 0 4
    size=$REPLY
    if ((size > 1 << 30)); then return 2; fi
    head -c "$size" <&"$fd" >"$file" 2>/dev/null
    passk_size "$file"
    if ((REPLY != size)); then return 2; fi
    return 0
}

# The bytes at offset $2 of file $1, $3 of them, as a string (NUL bytes dropped, as Bash drops them), in REPLY.
passk_bytes() {
    local - text
    set +e
    text=$(tail -c +$(($2 + 1)) "$1" | head -c "$3"; printf x)
    REPLY=${text%x}
}

# The call in file $1 (a message): its function's name in PASSK_NAME and its arguments in the array PASSK_ARGS.
# Status 2 if it is not exactly one well-formed call of strings.
passk_read_call() {
    local - LC_ALL=C file=$1 at size total count index tag
    set +e
    PASSK_NAME= PASSK_ARGS=()
    passk_size "$file"
    total=$REPLY
    if ((total < 9)); then return 2; fi
    passk_number "$file" 0 1
    if ((REPLY != 67)); then return 2; fi  # C
    passk_number "$file" 1 4
    size=$REPLY
    if ((5 + size + 4 > total)); then return 2; fi
    passk_bytes "$file" 5 "$size"
    PASSK_NAME=$REPLY
    at=$((5 + size))
    passk_number "$file" "$at" 4
    count=$REPLY
    at=$((at + 4))
    for ((index = 0; index < count; index++)); do
        if ((at + 5 > total)); then return 2; fi
        passk_number "$file" "$at" 1
        tag=$REPLY
        passk_number "$file" $((at + 1)) 4
        size=$REPLY
        if ((tag != 115 || at + 5 + size > total)); then return 2; fi  # s
        passk_bytes "$file" $((at + 5)) "$size"
        PASSK_ARGS+=("$REPLY")
        at=$((at + 5 + size))
    done
    ((at == total)) || return 2
}

# Writes the answer (stdout: the bytes of file $2; exit status $3) on descriptor $1, framed; fails if the other side
# is gone.
passk_write_answer() {
    local - fd=$1 output=$2 status=$3 size
    set +e
    passk_size "$output"
    size=$REPLY
    passk_u32 $((size + 13))
    local frame=$REPLY
    passk_u32 2
    local pair=$REPLY
    passk_u32 "$size"
    {
        printf "${frame}RP${pair}s$REPLY" && cat "$output" && printf "B\\x$(printf %02x "$status")"
    } 2>/dev/null >&"$fd"
}

# The answer in file $1 (a message): the size of its stdout in PASSK_OUTPUT_SIZE (the bytes from offset 11) and its
# exit status in PASSK_STATUS. Status 2 if it is not exactly one well-formed answer.
passk_read_answer() {
    local - file=$1 total size
    set +e
    passk_size "$file"
    total=$REPLY
    if ((total < 13)); then return 2; fi
    passk_number "$file" 0 1
    if ((REPLY != 82)); then return 2; fi  # R
    passk_number "$file" 1 1
    if ((REPLY != 80)); then return 2; fi  # P
    passk_number "$file" 2 4
    if ((REPLY != 2)); then return 2; fi
    passk_number "$file" 6 1
    if ((REPLY != 115)); then return 2; fi  # s
    passk_number "$file" 7 4
    size=$REPLY
    if ((size + 13 != total)); then return 2; fi
    passk_number "$file" $((11 + size)) 1
    if ((REPLY != 66)); then return 2; fi  # B
    passk_number "$file" $((12 + size)) 1
    PASSK_STATUS=$REPLY
    PASSK_OUTPUT_SIZE=$size
    return 0
}
