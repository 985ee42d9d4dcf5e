// pg_stat_waits_report: the HTML report and the live terminal view.
// Exit status: 0 ok, 1 server or extension problem, 2 usage error.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "exporter.h"
#include "pg_data.h"
#include "report_html.h"
#include "terminal.h"
#include "top_screen.h"

using namespace psw_report;

namespace {

int do_report(const Options &o) {
    Server server(o);
    ReportData d = server.read_report(o);
    std::string html = render_report_html(d);
    if (o.html_path == "-") {
        std::cout << html;
        return std::cout.good() ? 0 : 1;
    }
    std::string tmp = o.html_path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << html;
        f.close();
        if (!f) {
            std::cerr << "pg_stat_waits_report: cannot write " << o.html_path << "\n";
            std::remove(tmp.c_str());
            return 1;
        }
    }
    if (std::rename(tmp.c_str(), o.html_path.c_str()) != 0) {
        std::cerr << "pg_stat_waits_report: cannot write " << o.html_path << "\n";
        std::remove(tmp.c_str());
        return 1;
    }
    std::cerr << "wrote " << o.html_path << "\n";
    return 0;
}

int do_top(const Options &o) {
    Server server(o);
    bool plain = o.plain || o.once || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO);
    if (plain)
        return run_plain(o.interval_s, o.once ? 1 : o.iterations,
                         [&] { return render_top_screen(server.read_top(), 160, 0); });
    return run_fullscreen(o.interval_s, [&](int w, int h) { return render_top_screen(server.read_top(), w, h); });
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    ParseResult p = parse_args(args);
    if (!p.error.empty()) {
        std::cerr << "pg_stat_waits_report: " << p.error << "\n"
                  << "Try \"pg_stat_waits_report --help\" for more information.\n";
        return 2;
    }
    if (p.options.help) {
        std::cout << (p.options.command == "serve" ? serve_usage_text() : usage_text());
        return 0;
    }
    if (p.options.version) {
        std::cout << version_text();
        return 0;
    }
    try {
        if (p.options.command == "serve") return run_serve(p.options);
        return p.options.command == "report" ? do_report(p.options) : do_top(p.options);
    } catch (const FatalError &e) {
        std::cerr << "pg_stat_waits_report: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "pg_stat_waits_report: " << e.what() << "\n";
        return 1;
    }
}
