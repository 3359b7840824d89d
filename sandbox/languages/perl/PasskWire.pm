# The value wire (sandbox/runtime/values.py has the rule) in Perl: framing on descriptors and the codec.
# Installed in the Perl image as /opt/passk/perl/PasskWire.pm; used by the judge (judge.pl) and by passk's server in
# the candidate's process (PasskServer.pm).
#
# A Perl value is a scalar, and each crosses as what Perl 5.36 knows it to be:
#   undef n; a boolean (`!!1`, `1 == 1`, builtin::true) T or F; a number created as a number z when Perl holds it
#   as an integer (an IV or a UV: any value of 64 bits, signed or not), else d (binary64: -0.0, NaN payloads and
#   the infinities keep); a string s, the UTF-8 of its characters (Perl's own extended UTF-8: whatever characters
#   it holds, flagged as UTF-8 inside Perl or not: "\xe9" and "\x{e9}" are the same string); an unblessed ARRAY
#   reference A; an unblessed HASH reference M, its keys as strings in sorted order (a hash has no order of its own).
# Anything else (a blessed reference, a reference to a scalar, CODE, GLOB, Regexp, a structure that holds itself or
# is nested too deeply) cannot be rebuilt faithfully: the whole value crosses as X with its class or reference type,
# and the judge fails the sample as an error. A receiver refuses any other tag (an integer Perl cannot hold, a map
# with a key that is not a string, or twice) and any byte that is not exactly one well-formed value in its one
# canonical form (Malformed).
#
# Only data crosses: the receiver builds fresh values from bytes and never calls code of the sender's.

package PasskWire;

use strict;
use warnings;
no warnings 'experimental::builtin';

use B ();
use Scalar::Util ();

use constant {
    MAX_DEPTH   => 100,
    MAX_MESSAGE => 1 << 30,
    READ_CHUNK  => 1 << 20,
};

sub malformed { die bless { message => $_[0] }, 'PasskWire::Malformed' }
sub unsendable { die bless { type => $_[0] }, 'PasskWire::Unsendable' }
sub PasskWire::Malformed::message { $_[0]{message} }
sub PasskWire::Unsendable::type { $_[0]{type} }

# ------------------------------------------------------------------ bytes out

sub u32 { pack('N', $_[0]) }

# <u32 n> <n bytes> of a byte string.
sub string_bytes { pack('N', length $_[0]) . $_[0] }

# The UTF-8 of a string's characters.
sub text_bytes {
    my $bytes = $_[0];
    utf8::encode($bytes);
    return $bytes;
}

# Two's complement, big-endian, in values.py's number of bytes for `z`: (bit length of |value| + 8) / 8, the
# fewest that hold the value and its sign, but for -2**(8n-1), which takes n + 1 bytes there.
sub integer_bytes {
    my ($value, $unsigned) = @_;
    return u32(0) if $value == 0;
    my $raw = $unsigned ? "\0" . pack('Q>', $value) : pack('q>', $value);
    while (length($raw) > 1) {
        my ($first, $second) = unpack('C2', $raw);
        last unless ($first == 0 && $second < 0x80) || ($first == 0xff && $second >= 0x80);
        substr($raw, 0, 1, '');
    }
    $raw = "\xff" . $raw if $raw =~ /\A\x80\0*\z/;
    return u32(length $raw) . $raw;
}

# Appends the bytes of the value $_[1] (aliased: its own flags are read) to $$out, or dies Unsendable.
sub encode_value {
    my ($out, undef, $depth, $seen) = @_;
    unsendable('deeply nested value') if $depth > MAX_DEPTH;
    if (!defined $_[1]) {
        $$out .= 'n';
    } elsif (ref $_[1]) {
        my $ref = $_[1];
        my $class = Scalar::Util::blessed($ref);
        unsendable($class) if defined $class;
        my $type = Scalar::Util::reftype($ref);
        my $address = Scalar::Util::refaddr($ref);
        unsendable('deeply nested value') if $seen->{$address};
        local $seen->{$address} = 1;
        if ($type eq 'ARRAY') {
            $$out .= 'A' . u32(scalar @$ref);
            encode_value($out, $ref->[$_], $depth + 1, $seen) for 0 .. $#$ref;
        } elsif ($type eq 'HASH') {
            my @keys = sort keys %$ref;
            $$out .= 'M' . u32(scalar @keys);
            for my $key (@keys) {
                $$out .= 's' . string_bytes(text_bytes($key));
                encode_value($out, $ref->{$key}, $depth + 1, $seen);
            }
        } else {
            unsendable($type);
        }
    } elsif (builtin::is_bool($_[1])) {
        $$out .= $_[1] ? 'T' : 'F';
    } elsif (builtin::created_as_number($_[1])) {
        my $flags = B::svref_2object(\$_[1])->FLAGS;
        if ($flags & B::SVf_IOK) {
            $$out .= 'z' . integer_bytes($_[1], $flags & B::SVf_IVisUV);
        } else {
            $$out .= 'd' . pack('d>', $_[1]);
        }
    } else {
        $$out .= 's' . string_bytes(text_bytes("$_[1]"));
    }
}

# The bytes of the value $_[0]: itself, or X with the type of what cannot cross (the whole value).
sub encode {
    my $out = '';
    my $done = eval { encode_value(\$out, $_[0], 0, {}); 1 };
    return $out if $done;
    my $error = $@;
    die $error unless ref $error eq 'PasskWire::Unsendable';
    return 'X' . string_bytes(text_bytes($error->type));
}

# ------------------------------------------------------------------ bytes in

sub reader { return { data => $_[0], at => 0 } }

sub take {
    my ($reader, $size) = @_;
    malformed('truncated') if $size < 0 || $reader->{at} + $size > length $reader->{data};
    my $chunk = substr($reader->{data}, $reader->{at}, $size);
    $reader->{at} += $size;
    return $chunk;
}

sub take_u32 { unpack('N', take($_[0], 4)) }
sub take_string { take($_[0], take_u32($_[0])) }

sub finish {
    malformed('trailing bytes') unless $_[0]{at} == length $_[0]{data};
}

sub integer {
    my ($reader) = @_;
    my $size = take_u32($reader);
    return 0 if $size == 0;
    malformed('an integer Perl does not hold (more than 64 bits)') if $size > 9;
    my $bytes = take($reader, $size);
    my $value;
    my $unsigned = $size == 9 && substr($bytes, 0, 1) eq "\0";
    if ($unsigned) {
        $value = unpack('Q>', substr($bytes, 1));
    } elsif ($size == 9) {
        malformed('an integer Perl does not hold (more than 64 bits)') unless substr($bytes, 0, 1) eq "\xff";
        $value = unpack('q>', substr($bytes, 1));
    } else {
        my $sign = unpack('C', $bytes) >= 0x80 ? "\xff" : "\0";
        $value = unpack('q>', ($sign x (8 - $size)) . $bytes);
    }
    # One canonical form: the fewest bytes (values.py's encoder), so equal values have equal bytes.
    malformed('an integer not in its shortest form') unless integer_bytes($value, $unsigned) eq u32($size) . $bytes;
    return $value;
}

sub text {
    my ($reader) = @_;
    my $bytes = take_string($reader);
    my $value = $bytes;
    malformed('a string that is not UTF-8') unless utf8::decode($value);
    malformed('a string not in its shortest UTF-8') unless text_bytes($value) eq $bytes;
    return $value;
}

# A value rebuilt from $reader: Unsendable for X (a value the sender could not carry), Malformed for anything that
# is not one well-formed value of a type Perl rebuilds.
sub decode_value {
    my ($reader, $depth) = @_;
    malformed('nested too deeply') if $depth > MAX_DEPTH;
    my $tag = take($reader, 1);
    return undef if $tag eq 'n';
    return !!1 if $tag eq 'T';
    return !!0 if $tag eq 'F';
    return integer($reader) if $tag eq 'z';
    return unpack('d>', take($reader, 8)) if $tag eq 'd';
    return text($reader) if $tag eq 's';
    if ($tag eq 'A') {
        # Item by item: a count alone never makes the reader allocate it.
        my $count = take_u32($reader);
        my @array;
        push @array, decode_value($reader, $depth + 1) for 1 .. $count;
        return \@array;
    }
    if ($tag eq 'M') {
        my $count = take_u32($reader);
        my %hash;
        for (1 .. $count) {
            malformed('a map with a key that is not a string') unless take($reader, 1) eq 's';
            my $key = text($reader);
            malformed('a map with a key twice') if exists $hash{$key};
            $hash{$key} = decode_value($reader, $depth + 1);
        }
        return \%hash;
    }
    if ($tag eq 'X') {
        my $type = take_string($reader);
        utf8::decode($type);
        unsendable($type);
    }
    malformed(sprintf('a tag Perl does not read: %s', unpack('H*', $tag)));
}

# The one value $_[0] (bytes) holds.
sub decode {
    my $reader = reader($_[0]);
    my $value = decode_value($reader, 0);
    finish($reader);
    return $value;
}

# ------------------------------------------------------------------ framing

# Exactly $size bytes from $fh; undef at a clean end of input before the first byte, Malformed if cut.
sub read_exactly {
    my ($fh, $size, $clean_end) = @_;
    my $data = '';
    while (length($data) < $size) {
        my $want = $size - length $data;
        $want = READ_CHUNK if $want > READ_CHUNK;
        my $got = sysread($fh, $data, $want, length $data);
        next if !defined $got && $!{EINTR};
        if (!$got) {
            return undef if $clean_end && $data eq '';
            malformed('a message cut short');
        }
    }
    return $data;
}

# The next framed message on $fh, or undef at a clean end of input before it.
sub receive {
    my ($fh) = @_;
    my $header = read_exactly($fh, 4, 1);
    return undef unless defined $header;
    my $size = unpack('N', $header);
    malformed('a message over 1 GiB') if $size > MAX_MESSAGE;
    return $size == 0 ? '' : read_exactly($fh, $size, 0);
}

# Writes $message framed; false if the other side is gone.
sub send_message {
    my ($fh, $message) = @_;
    local $SIG{PIPE} = 'IGNORE';
    my $framed = u32(length $message) . $message;
    my $at = 0;
    while ($at < length $framed) {
        my $wrote = syswrite($fh, $framed, length($framed) - $at, $at);
        if (!defined $wrote) {
            next if $!{EINTR} || $!{EAGAIN};
            return 0;
        }
        $at += $wrote;
    }
    return 1;
}

1;
