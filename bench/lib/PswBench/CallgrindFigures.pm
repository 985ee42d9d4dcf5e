# Section 1's comparison of a configuration with the compute_query_id = on
# baseline, shared by the section's tables (PswBench::CallgrindRender) and
# the acceptance checks (bench/report.pl, which runs outside prove: this
# file reads raw figures only, through PswBench::Figures).
#
# Why glibc's allocator is priced apart: a client's statement makes the same
# allocator calls in every configuration (a SELECT 1: MessageContext's
# second 8 kB block, taken at planning and given back when the next
# statement resets the context), but what one call costs depends on where
# the heap's free chunks lie after start-up, which any preloaded library's
# start-up allocations move. In the committed 18 report that malloc and free
# took 448 instructions in pg_stat_waits' runs and 269 in the others: 179
# instructions per statement of heap layout, not of the library's code. So
# the verdicts count the allocator's calls at the baseline's cost per call:
# a call a configuration adds is still its cost, a call that got dearer
# because the heap lies otherwise is not. (docs/bench.md, section 1.)
package PswBench::CallgrindFigures;

use strict;
use warnings;
use Exporter 'import';
use PswBench::Figures qw(figure have);

our @EXPORT = qw(cg_compare);

# cg_compare(ROWS, SECTION, PARAM, CONFIG): the configuration against the
# baseline on the same path, as a hash: base, value, delta (all of it),
# like (the delta with the allocator's calls priced at the baseline's cost
# per call; equal to delta where the allocator was not measured), alloc (1
# when it was), pct and like_pct (over the baseline). Undef without both
# figures.
sub cg_compare
{
	my ($rows, $section, $param, $cfg) = @_;
	my $b = figure($rows, $section, 'none_qid', $param);
	my $v = figure($rows, $section, $cfg, $param);
	return undef unless have($b) && have($v) && $b != 0;
	my %r = (base => $b, value => $v, delta => $v - $b, like => $v - $b, alloc => 0);
	my ($ab, $cb, $av, $cv) = map { figure($rows, $section, @$_) }
	  ([ 'none_qid', 'alloc_instr' ], [ 'none_qid', 'alloc_calls' ], [ $cfg, 'alloc_instr' ], [ $cfg, 'alloc_calls' ]);
	if (have($ab) && have($cb) && have($av) && have($cv))
	{
		# The baseline's cost per call; a baseline that never calls the
		# allocator leaves the configuration's own price.
		my $price = $cb > 0 ? $ab / $cb : ($cv > 0 ? $av / $cv : 0);
		$r{like} = ($v - $av) - ($b - $ab) + ($cv - $cb) * $price;
		$r{alloc} = 1;
	}
	$r{pct} = 100 * $r{delta} / $b;
	$r{like_pct} = 100 * $r{like} / $b;
	return \%r;
}

1;
