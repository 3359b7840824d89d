# The judge's runtime for Perl (installed as /opt/passk/perl/judge.pl): the entry point of the judge's process,
# `perl judge.pl` in the judge's directory. It holds none of the model's code.
#
# It runs the tests (main.pl: the prompt's code before the function to complete, a stub for that function, the
# problem's tests) with `do`, and reports PASS on descriptor 3 once they ran to their end (or ended with `exit 0`,
# as a program whose tests passed does). MultiPL-E's tests end with `exit 1` at the first failed check: that
# fails the sample, with the line of the check on stderr (`passk: a test failed: ...`); a `die` of the tests is
# an error. A stub's call sends the caller's context and the arguments to the candidate's process (descriptor 4)
# and returns the value it answers (descriptor 5), rebuilt from data. How a call ends the tests instead
# (report.py): the candidate's process ended or closed its channel (ENDED), the function died (RAISED <class>:
# <message>, which the tests cannot catch), it returned a value the wire cannot carry (ERROR), or it sent anything
# but one well-formed answer (BROKEN). Data the candidate wrote unasked is looked for before each call, before PASS
# (there it is BROKEN), and as failing tests end (FLAG out_of_turn).

use strict;
use warnings;

use lib '/opt/passk/perl';
use PasskWire;
use POSIX ();

package PasskJudge;

# How long the ending judge waits for the candidate's process to end once its calls are closed.
use constant SURPLUS_WAIT_S => 0.1;

$SIG{PIPE} = 'IGNORE';
open(my $REPORT, '>&=', 3) or die "passk: no report descriptor: $!";
open(my $CALLS, '>&=', 4) or die "passk: no calls descriptor: $!";
open(my $REPLIES, '<&=', 5) or die "passk: no replies descriptor: $!";
binmode($_) for $REPORT, $CALLS, $REPLIES;

sub readable {
    my ($timeout) = @_;
    my $wanted = '';
    vec($wanted, fileno($REPLIES), 1) = 1;
    my $found = select(my $ready = $wanted, undef, undef, $timeout);
    return $found && $found > 0;
}

# True if the candidate's process wrote anything no call asked for (one byte of it is consumed). An end of input
# is not data: the next call sees the candidate gone.
sub unasked {
    return 0 unless readable(0);
    return sysread($REPLIES, my $byte, 1) ? 1 : 0;
}

# Unasked data, looked for as failing tests end: the calls are closed, so an honest server returns and its process
# ends (end of input on the replies); whatever arrives before that, or within SURPLUS_WAIT_S, is unasked.
sub surplus {
    close($CALLS);
    return 0 unless readable(SURPLUS_WAIT_S);
    return sysread($REPLIES, my $byte, 1) ? 1 : 0;
}

sub write_report {
    my ($text) = @_;
    utf8::encode($text);
    syswrite($REPORT, $text);
}

# End the tests with $record as the report (its last line is the outcome: report.py).
sub finish {
    my ($record) = @_;
    write_report((surplus() ? "FLAG out_of_turn\n" : '') . $record);
    POSIX::_exit(1);
}

sub cannot_compare {
    my ($name, $type) = @_;
    finish("ERROR $name() returned a value of type $type, which passk cannot compare");
}

# The stubs' call: $name with the arguments as the tests passed them, in the stub's own context (the stub returns
# this call's value).
sub call {
    my $name = shift;
    my $context = wantarray;
    finish("BROKEN $name(): the program wrote on its channel before the call") if unasked();
    my $message = 'C' . PasskWire::string_bytes(PasskWire::text_bytes($name)) . PasskWire::u32(@_ + 1);
    $message .= $context ? 'T' : defined $context ? 'F' : 'n';
    for my $index (0 .. $#_) {
        my $encoded = PasskWire::encode($_[$index]);
        if (substr($encoded, 0, 1) eq 'X') {
            my $type = PasskWire::text(PasskWire::reader(substr($encoded, 1)));
            finish("ERROR the tests pass $name() a value of type $type, which passk cannot send");
        }
        $message .= $encoded;
    }
    finish('ENDED') unless PasskWire::send_message($CALLS, $message);
    my $reply = eval { PasskWire::receive($REPLIES) };
    broken($name, $@) if $@;
    finish('ENDED') unless defined $reply;
    my $value = answer($name, $reply);
    if ($context) {
        finish("BROKEN $name(): a list was asked for") unless ref $value eq 'ARRAY';
        return @$value;
    }
    return $value;
}

sub broken {
    my ($name, $error) = @_;
    die $error unless ref $error eq 'PasskWire::Malformed';
    finish("BROKEN $name(): " . $error->message);
}

sub answer {
    my ($name, $reply) = @_;
    my $value = eval {
        my $reader = PasskWire::reader($reply);
        my $kind = PasskWire::take($reader, 1);
        if ($kind eq 'E') {
            my $type = PasskWire::take_string($reader);
            my $text = PasskWire::take_string($reader);
            PasskWire::finish($reader);
            utf8::decode($type);
            utf8::decode($text);
            finish("RAISED $type: $text");
        }
        if ($kind eq 'U') {
            my $type = PasskWire::take_string($reader);
            PasskWire::finish($reader);
            utf8::decode($type);
            cannot_compare($name, $type);
        }
        PasskWire::malformed('not an answer') unless $kind eq 'R';
        my $decoded = PasskWire::decode_value($reader, 0);
        PasskWire::finish($reader);
        [$decoded];
    };
    return $value->[0] if $value;
    my $error = $@;
    cannot_compare($name, $error->type) if ref $error eq 'PasskWire::Unsendable';
    broken($name, $error);
}

# After the tests: the only way to a pass. (Only what is there already: waiting for the candidate's process to
# end would cost every pass its exit.)
sub pass {
    finish('BROKEN the program wrote on its channel after its last answer') if unasked();
    write_report('PASS');
    STDOUT->flush;
    POSIX::_exit(0);
}

# The tests failed (a check's `exit` with another status than 0) or died: the reason on stderr, for PID 1's
# stderr patterns.
sub failed {
    my ($line) = @_;
    STDOUT->flush;
    $line =~ s/\s+\z//;
    print STDERR "$line\n";
    STDERR->flush;
    write_report("FLAG out_of_turn\n") if surplus();
    POSIX::_exit(1);
}

# The tests' `exit`: 0 ends them as passed; anything else is a failed check.
sub tests_exit {
    my $status = @_ ? $_[0] : 0;
    $status = 0 unless defined $status;
    pass() if $status == 0;
    my (undef, $file, $line) = caller;
    failed("passk: a test failed: the tests exited with status $status at $file line $line");
}

BEGIN { *CORE::GLOBAL::exit = \&PasskJudge::tests_exit }

package main;

unless (-r './main.pl') {
    PasskJudge::write_report("SETUP the tests' file main.pl is missing");
    POSIX::_exit(1);
}
do './main.pl';
if ($@) {
    my $error = $@;
    my $text = ref $error ? ref($error) . ": $error" : "$error";
    PasskJudge::failed($text);
}
PasskJudge::pass();
