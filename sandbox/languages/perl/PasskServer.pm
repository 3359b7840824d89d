# passk's server in the candidate's process (installed as /opt/passk/perl/PasskServer.pm, loaded with
# `perl -MPasskServer` before the model's code is compiled). The candidate's program is the original program's text
# up to the tests (the prompt and the model's completion), followed by one statement that passk adds:
#
#     ;PasskServer::serve(\&name);
#
# so the function is served exactly where the tests would have started in one program, after every top-level
# statement of the model's code, and `\&name` names the sub the tests' own `\&name` would. The server reads calls
# on descriptor 3, calls the function in the caller's context (list, scalar or void: the judge's stub was called
# in it) with the arguments rebuilt from data, and answers on descriptor 4: the value it returned ('R': in list
# context the list, as an array), or what it died with ('E' <class> <message>: the class of a blessed exception,
# else "die"). When the judge closes its end, serve returns and the program runs on to its end.
#
# What no `eval` catches (`exit`, running out of memory, signals) ends this process as it would end the one
# process of the original program: `exit 0` in the function exits, memory exhaustion is fatal.
#
# The server is the candidate's own: the model's code may change anything in this process, and so anything the
# server sends. The judge trusts none of it (judge.pl, values.py).

package PasskServer;

use strict;
use warnings;

use PasskWire;
use POSIX ();
use Scalar::Util ();

use constant { CALLS => 3, REPLIES => 4 };

my $serving = 0;

sub describe {
    my ($error) = @_;
    my $class = Scalar::Util::blessed($error);
    my $text = eval { "$error" };
    $text = '' unless defined $text;
    $text =~ s/\s+\z//;
    return (defined $class ? $class : 'die', $text);
}

sub answer {
    my ($function, $context, $args) = @_;
    my $reply = eval {
        if (!defined $context) {
            $function->(@$args);
            'Rn';
        } elsif ($context) {
            my @list = $function->(@$args);
            'R' . PasskWire::encode(\@list);
        } else {
            my $value = $function->(@$args);
            'R' . PasskWire::encode($value);
        }
    };
    return $reply if defined $reply;
    my ($class, $text) = describe($@);
    return 'E' . PasskWire::string_bytes(PasskWire::text_bytes($class))
        . PasskWire::string_bytes(PasskWire::text_bytes($text));
}

# Serve the sub $function until the judge closes its end.
sub serve {
    my ($function) = @_;
    return if $serving++;
    open(my $calls, '<&=', CALLS) or return;
    open(my $replies, '>&=', REPLIES) or return;
    binmode($_) for $calls, $replies;
    my $served = eval {
        while (1) {
            my $message = PasskWire::receive($calls);
            last unless defined $message;
            my $reader = PasskWire::reader($message);
            PasskWire::malformed('not a call') unless PasskWire::take($reader, 1) eq 'C';
            PasskWire::take_string($reader);
            my $count = PasskWire::take_u32($reader);
            PasskWire::malformed('a call without its context') unless $count >= 1;
            my $context = PasskWire::decode_value($reader, 1);
            my @args = map { PasskWire::decode_value($reader, 1) } 2 .. $count;
            PasskWire::finish($reader);
            last unless PasskWire::send_message($replies, answer($function, $context, \@args));
        }
        1;
    };
    # Only the judge writes calls: a call it did not mean is passk's own failure.
    POSIX::_exit(70) unless $served;
    return;
}

1;
