# Source lists shared by the PGXS Makefile and CMakeLists.txt (CMake reads the
# "NAME = words" lines of this file; keep each list on one logical line, with
# backslash continuations only). Entries are paths or globs relative to the
# repository root; a glob that matches nothing is empty.

# The PostgreSQL-free core (also linked into the unit tests).
PSW_CORE_SOURCES = src/core/*.cpp

# The extension's PostgreSQL side ...
PSW_PG_SOURCES = src/pg/*.cpp src/pg/*/*.cpp
# ... less the test module's entry points, compiled only into a test build
# (make PSW_TEST_HOOKS=1).
PSW_TEST_HOOK_SOURCES = src/pg/testing/*.cpp

# pg_stat_waits_report: the PostgreSQL-free rendering (unit-tested) ...
PSW_REPORT_CORE_SOURCES = tools/report/cli.cpp tools/report/duration.cpp tools/report/svg_chart.cpp \
  tools/report/report_html.cpp tools/report/top_screen.cpp tools/report/prom_metrics.cpp \
  tools/report/load_model.cpp tools/report/html_parts.cpp tools/report/page_html.cpp \
  tools/report/wait_series.cpp tools/report/web_config.cpp tools/report/basic_auth.cpp \
  tools/report/http_guard.cpp
# ... and the libpqxx program around it (with the Prometheus endpoint).
PSW_REPORT_MAIN_SOURCES = tools/report/main.cpp tools/report/pg_data.cpp tools/report/terminal.cpp \
  tools/report/exporter.cpp tools/report/pg_window.cpp tools/report/live_page.cpp \
  tools/report/serve_http.cpp tools/report/tls_context.cpp

# Warning flags of every C++ translation unit, written once. -Werror is added
# only on request (make PSW_WERROR=1, cmake -DPSW_WERROR=ON; ./run sets it).
PSW_WARNINGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
