# prove's formatter for ./run test (prove --formatter PswTapFormatter).
# Every test file's TAP is read by TAP::Parser, and this prints one line per
# file: its result, its counts and its time, and under a failing file its
# failed assertions. Their diagnostics (Test::More's diag, a die message) are
# on the tests' standard error, which prove passes through as the file runs,
# just before that line; notes (the psql sessions' and nodes' debug output,
# on standard output) are not printed: they stay in tmp_check/log.
#
# With PSW_TAP_COUNTS set, the totals go to that file as one line
# "PASSED FAILED SKIPPED" for the runner, so it counts from the parsed TAP
# rather than from text. Counts are of top-level assertions; a skipped
# assertion or file counts as skipped, never as passed; a file that dies or
# plans wrongly counts one failure more (none of its assertions may have
# failed, yet it did not finish).
package PswTapFormatter;

use strict;
use warnings;
use parent 'TAP::Formatter::Base';

# The tests' standard error goes straight out: this output must keep up
# with it, so that a file's diagnostics come right before its line.
STDOUT->autoflush(1);

sub open_test
{
	my ($self, $test, $parser) = @_;
	return PswTapFormatter::Session->new(
		{ name => $test, formatter => $self, parser => $parser });
}

sub add_counts
{
	my ($self, $p, $f, $s) = @_;
	$self->{psw_counts}[0] += $p;
	$self->{psw_counts}[1] += $f;
	$self->{psw_counts}[2] += $s;
	return;
}

sub summary
{
	my ($self, $aggregate, $interrupted) = @_;
	my ($p, $f, $s) = @{ $self->{psw_counts} || [ 0, 0, 0 ] };
	# An interrupted run did not finish: it must not read as a pass.
	$f++ if $interrupted;
	$self->_output(sprintf("TAP: %d files, %d passed, %d failed, %d skipped%s\n",
		scalar($aggregate->descriptions), $p, $f, $s, $interrupted ? ' (interrupted)' : ''));
	if (my $path = $ENV{PSW_TAP_COUNTS})
	{
		open(my $fh, '>', $path) or die "cannot write $path: $!";
		print $fh "$p $f $s\n";
		close($fh) or die "cannot write $path: $!";
	}
	return;
}

package PswTapFormatter::Session;

use strict;
use warnings;
use parent 'TAP::Formatter::Session';

sub result
{
	my ($self, $result) = @_;
	push @{ $self->{psw_failures} }, $result->as_string if $result->is_test && !$result->is_ok;
	return;
}

sub close_test
{
	my ($self) = @_;
	my $parser = $self->parser;
	my $formatter = $self->formatter;
	my $secs = ($parser->end_time || 0) - ($parser->start_time || 0);
	my ($p, $f, $s, $status);
	if ($parser->skip_all)
	{
		($p, $f, $s) = (0, 0, 1);
		$status = 'skipped: ' . $parser->skip_all;
	}
	else
	{
		$s = scalar($parser->skipped);
		$p = scalar($parser->passed) - $s;
		$f = scalar($parser->failed);
		my $died = $parser->exit || $parser->wait;
		my @errors = $parser->parse_errors;
		$f++ if @errors || ($died && !$f);
		$status = $f ? 'FAILED' : 'ok';
		$status .= ' (exit ' . $parser->exit . ')' if $died;
		$status .= ' (' . join('; ', @errors) . ')' if @errors;
	}
	$formatter->add_counts($p, $f, $s);
	$formatter->_output(sprintf("%-34s %5d passed%s%s  %6.1f s  %s\n",
		$self->name, $p, $f ? ", $f failed" : '', $s ? ", $s skipped" : '', $secs, $status));
	$formatter->_output("    $_\n") for @{ $self->{psw_failures} || [] };
	return;
}

1;
