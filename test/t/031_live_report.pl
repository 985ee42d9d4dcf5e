# pg_stat_waits_report's live page (serve, /report/NAME) in a real headless
# Chromium at 1400 and 800 px, report --compare on a scripted lock storm,
# the last bucket's load against the activity view, and the sampled against
# the exact shares of the top statements: test/report/live_checks.sh
# against a node of its own (the port it gets is serve's); each line it
# prints is one assertion here.
use strict;
use warnings;
use Test::More;
use PswTest;

psw_run_node_checks('live_report', 'test/report/live_checks.sh', 18);
done_testing();
