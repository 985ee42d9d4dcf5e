#include "cli.h"

#include <cstdlib>

#include "duration.h"
#include "load_model.h"

namespace psw_report {

std::string usage_text() {
    return "pg_stat_waits_report: pictures and a live view of pg_stat_waits\n"
           "\n"
           "Usage:\n"
           "  pg_stat_waits_report report [--since 1h | --from TIME [--to TIME]] [--compare BASELINE]\n"
           "                              [--slice class] [--bucket 1min] [--top N] --html FILE [conn options]\n"
           "  pg_stat_waits_report top [--interval 1s] [--once] [--plain] [--count N] [conn options]\n"
           "  pg_stat_waits_report serve [--listen [ADDR]:PORT] [--web.config.file FILE] [--config FILE]\n"
           "                             [--target NAME=DSN]... [--top N] [--histogram-events N]\n"
           "                             [--slow-interval 1min] [conn options]\n"
           "\n"
           "report: writes one self-contained HTML file (inline SVG, no network): database load (average active\n"
           "        sessions) with a line at the server's CPU count, top SQL by load, top blocking sessions, top\n"
           "        wait events, slowest runs, wait duration histograms and the sampler's status. --html - writes\n"
           "        to stdout. The window: --since back from now, or --from TIME [--to TIME] (timestamps as the\n"
           "        server reads them, or epoch seconds). --slice stacks the load by class, event, sql, user,\n"
           "        database or backend. --compare BASELINE adds this window against a baseline, per wait and\n"
           "        per statement: a duration (1d: the same window a day earlier), prev (the window just\n"
           "        before), or FROM..TO.\n"
           "top:    live view refreshing every second: sessions now and top waits of the last minute; q or\n"
           "        Ctrl-C quits. When stdout is not a terminal (or with --plain/--once) it prints plain text:\n"
           "        --once one snapshot, --count N that many, else until interrupted.\n"
           "serve:  Prometheus exporter on --listen (default :9866); serve --help says who may read what.\n"
           "        /metrics reads every target;\n"
           "        /probe?target=NAME reads one; /report/NAME is that target's live report page (window,\n"
           "        slice and comparison picked on the page, generated on each request). Targets: --config FILE (lines NAME = connection string)\n"
           "        and --target NAME=DSN; with neither, the connection options make one target \"default\".\n"
           "        --top N queries per target (default 20), --histogram-events N (default 64);\n"
           "        per-query exact times are re-read every --slow-interval (default 1min).\n"
           "\n"
           "Durations: 90 (seconds), 30s, 5min, 1h, 2d, 1h30min.\n"
           "\n"
           "Connection options (libpq; PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, ~/.pgpass apply):\n"
           "  -h, --host=HOST      server host or socket directory\n"
           "  -p, --port=PORT      server port\n"
           "  -U, --username=USER  user name\n"
           "  -d, --dbname=DBNAME  database name, or a connection string / URI\n"
           "  --help               this text\n"
           "  --version            the tool's version\n";
}

std::string serve_usage_text() {
    return "pg_stat_waits_report serve: Prometheus exporter and live report pages\n"
           "\n"
           "Who may read what. Without --web.config.file: /metrics and /probe answer anyone who reaches\n"
           "--listen (numbers and query ids, as other Prometheus exporters); /report/NAME shows statement\n"
           "texts and answers only this host (127.0.0.0/8, ::1; any other peer gets 403). For remote\n"
           "readers, a reverse proxy on this host must carry the login, or --web.config.file FILE configures\n"
           "one: the Prometheus exporter-toolkit format (tls_server_config: cert_file, key_file, min_version,\n"
           "max_version, client_auth_type, client_ca_file; basic_auth_users: NAME: bcrypt hash). Then every\n"
           "path asks for that login, and /report/ opens to whoever passes it. Fields this tool does not\n"
           "implement are refused by name.\n"
           "\n"
           "Usage:\n"
           "  pg_stat_waits_report serve [--listen [ADDR]:PORT] [--web.config.file FILE] [--config FILE]\n"
           "                             [--target NAME=DSN]... [--top N] [--histogram-events N]\n"
           "                             [--slow-interval 1min] [conn options]\n"
           "\n"
           "  --listen [ADDR]:PORT   where to listen (default :9866, every IPv4 address; [::]:PORT for IPv6);\n"
           "  --web.listen-address [ADDR]:PORT  the same (the Prometheus exporters' name)\n"
           "  --web.config.file FILE TLS and login (see above)\n"
           "  --config FILE          targets, one per line: NAME = libpq connection string\n"
           "  --target NAME=DSN      one more target; with no target, the connection options make \"default\"\n"
           "  --top N                queries per target (default 20)\n"
           "  --histogram-events N   events with a duration histogram (default 64)\n"
           "  --slow-interval DUR    how often per-query exact times are re-read (default 1min)\n"
           "\n"
           "Paths: /metrics (every target), /probe?target=NAME (one), /report/NAME (the live page).\n"
           "HTTP: GET and HEAD only; request line and headers up to 8 KiB; a request head (and TLS\n"
           "handshake) must arrive within 10 s; 64 requests are served at once (docs/exporters.md).\n";
}

std::string version_text() { return "pg_stat_waits_report (pg_stat_waits) 1.2\n"; }

namespace {

bool parse_int(const std::string &s, int lo, int hi, int *out) {
    if (s.empty()) return false;
    char *end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (*end != '\0' || v < lo || v > hi) return false;
    *out = static_cast<int>(v);
    return true;
}

}  // namespace

ParseResult parse_args(const std::vector<std::string> &args) {
    ParseResult r;
    Options &o = r.options;
    size_t i = 0;
    auto fail = [&](const std::string &msg) {
        r.error = msg;
        return r;
    };
    for (; i < args.size(); i++) {
        std::string a = args[i], value;
        bool has_inline = false;
        if (a.rfind("--", 0) == 0) {
            size_t eq = a.find('=');
            if (eq != std::string::npos) {
                value = a.substr(eq + 1);
                a = a.substr(0, eq);
                has_inline = true;
            }
        } else if (a.size() > 2 && a[0] == '-' && a[1] != '-') {
            // -hlocalhost, -p5432: libpq tools accept the value glued on.
            value = a.substr(2);
            a = a.substr(0, 2);
            has_inline = true;
        }
        auto next = [&](std::string *out) -> bool {
            if (has_inline) {
                *out = value;
                return true;
            }
            if (i + 1 >= args.size()) return false;
            *out = args[++i];
            return true;
        };
        std::string v;
        if (a == "--help" || a == "-?") {
            o.help = true;
        } else if (a == "--version" || a == "-V") {
            o.version = true;
        } else if (a == "--from" || a == "--to" || a == "--compare") {
            if (!next(&v) || v.empty()) return fail("option " + a + " needs a value");
            (a == "--from" ? o.from : a == "--to" ? o.to : o.compare) = v;
        } else if (a == "--slice") {
            if (!next(&o.slice) || !parse_slice(o.slice))
                return fail("invalid --slice \"" + o.slice + "\" (class, event, sql, user, database or backend)");
        } else if (a == "-h" || a == "--host") {
            if (!next(&o.host)) return fail("option " + a + " needs a value");
        } else if (a == "-p" || a == "--port") {
            if (!next(&o.port)) return fail("option " + a + " needs a value");
            int port;
            if (!parse_int(o.port, 1, 65535, &port)) return fail("invalid port: " + o.port);
        } else if (a == "-U" || a == "--username") {
            if (!next(&o.user)) return fail("option " + a + " needs a value");
        } else if (a == "-d" || a == "--dbname") {
            if (!next(&o.dbname)) return fail("option " + a + " needs a value");
        } else if (a == "--since" || a == "--bucket" || a == "--interval" || a == "--slow-interval") {
            if (!next(&v)) return fail("option " + a + " needs a value");
            auto d = parse_duration(v);
            if (!d) return fail("invalid duration for " + a + ": \"" + v + "\" (examples: 90, 30s, 5min, 1h)");
            if (a == "--since") o.since_s = *d;
            else if (a == "--bucket") o.bucket_s = *d;
            else if (a == "--slow-interval") o.slow_interval_s = *d;
            else o.interval_s = *d;
        } else if (a == "--html") {
            if (!next(&o.html_path) || o.html_path.empty()) return fail("option --html needs a file name");
        } else if (a == "--top" || a == "--count" || a == "--histogram-events") {
            if (!next(&v)) return fail("option " + a + " needs a value");
            int n;
            if (!parse_int(v, a == "--histogram-events" ? 0 : 1, 1000000, &n))
                return fail("invalid number for " + a + ": " + v);
            if (a == "--top") {
                o.top_n = n;
                o.top_given = true;
            } else if (a == "--count") {
                o.iterations = n;
            } else {
                o.histogram_events = n;
            }
        } else if (a == "--listen" || a == "--web.listen-address") {
            if (!next(&o.listen) || o.listen.empty()) return fail("option " + a + " needs [ADDRESS]:PORT");
        } else if (a == "--web.config.file") {
            if (!next(&o.web_config_path) || o.web_config_path.empty())
                return fail("option --web.config.file needs a file name");
        } else if (a == "--config") {
            if (!next(&o.config_path) || o.config_path.empty()) return fail("option --config needs a file name");
        } else if (a == "--target") {
            if (!next(&v)) return fail("option --target needs NAME=DSN");
            size_t eq = v.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
                return fail("option --target needs NAME=DSN, got \"" + v + "\"");
            o.targets.emplace_back(v.substr(0, eq), v.substr(eq + 1));
        } else if (a == "--once") {
            o.once = true;
        } else if (a == "--plain") {
            o.plain = true;
        } else if (!a.empty() && a[0] == '-' && a != "-") {
            return fail("unknown option: " + args[i]);
        } else if (o.command.empty()) {
            o.command = a;
        } else {
            return fail("unexpected argument: " + a);
        }
    }
    if (o.help || o.version) return r;
    if (!o.to.empty() && o.from.empty()) return fail("--to needs --from");
    if (o.command.empty()) return fail("no command given (report, top or serve)");
    if (o.command != "report" && o.command != "top" && o.command != "serve")
        return fail("unknown command: " + o.command);
    if (o.command == "serve" && !o.top_given) o.top_n = 20;
    if (o.command == "report" && o.html_path.empty()) return fail("report needs --html FILE (or --html - for stdout)");
    if (o.command == "report" && o.bucket_s > o.since_s) return fail("--bucket is longer than --since");
    if (o.command == "top" && o.interval_s < 0.1) return fail("--interval must be at least 100ms");
    return r;
}

}  // namespace psw_report
