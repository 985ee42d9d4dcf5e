# What this build has, found once before the sections (which read it back
# from features.tsv) and named in the report's header: pg_stat_waits is
# started with timing on and asked; the peers are looked up in pkglibdir.
use strict;
use warnings;
use PswBench;
use Test::More;

for my $f (qw(psw_sampler psw_profile psw_timing psw_explain_waits pg_wait_sampling pg_stat_statements))
{
	note(sprintf('%-20s %s', $f, feature($f) ? 'yes' : 'no: ' . feature_why($f)));
}
ok(feature('psw_sampler'), 'the sampler runs in this build');
ok(feature('psw_timing'), 'exact timing is in this build (interposed: ' . feature('interposed') . ')');
ok(-s bench_dir() . '/features.tsv', 'features written for the sections and the report');
done_testing();
