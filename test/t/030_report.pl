# pg_stat_waits_report: the terminal (`top` in tmux) and the HTML report
# (rendered by headless Chromium), driven by test/report/report_checks.sh
# against a node of its own; each line it prints is one assertion here. The
# port it gets is one where no server listens (the unreachable-server check).
use strict;
use warnings;
use Test::More;
use PswTest;

psw_run_node_checks('report', 'test/report/report_checks.sh', 60);
done_testing();
