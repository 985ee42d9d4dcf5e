# PGXS build of the pg_stat_waits extension (C++17).
#   make && make install && make installcheck
# installcheck needs the library preloaded: by default it starts a temporary
# instance with test/regress.conf (run it as a non-root user), or pass
# REGRESS_OPTS='--host=... --port=...' to use a running, preloaded server.

EXTENSION = pg_stat_waits
MODULE_big = pg_stat_waits
DATA = $(wildcard extension/pg_stat_waits--*.sql) $(wildcard extension/compat/pg_wait_sampling_compat*)
PGFILEDESC = "pg_stat_waits - sampled and exact wait-event statistics"

CORE_SRCS = $(wildcard src/core/*.cpp)
PG_SRCS = $(wildcard src/pg/*.cpp)
OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o)

REGRESS = $(basename $(notdir $(wildcard sql/*.sql)))
REGRESS := $(filter-out nopreload,$(REGRESS))
REGRESS_OPTS ?= --temp-instance=tmp_check --temp-config=$(CURDIR)/test/regress.conf

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)

PSW_CXXFLAGS = -std=c++17 -fvisibility=hidden -fvisibility-inlines-hidden \
               -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server)
SHLIB_LINK = -lstdc++

include $(PGXS)

# PGXS adds the server include dir with -I; -isystem above keeps its warnings
# out of -Werror. C++ flags go to both g++ and the LLVM bitcode rule.
override CXXFLAGS += $(PSW_CXXFLAGS)
override BITCODE_CXXFLAGS += -std=c++17 -fvisibility=hidden -Wno-ignored-attributes

# Header dependencies (PGXS tracks them only in --enable-depend builds).
override CXXFLAGS += -MMD -MP
-include $(OBJS:.o=.d)
EXTRA_CLEAN = $(OBJS:.o=.d)

# pg_stat_waits_report (C++17, libpqxx): built with the extension and
# installed into PostgreSQL's bindir (DESTDIR honoured). `make WITH_REPORT=no`
# builds and installs the extension alone; without libpqxx or prometheus-cpp
# (pkg-config) the program is skipped with a warning. Its `serve` command (the
# Prometheus exporter) uses prometheus-cpp core + pull and civetweb.
WITH_REPORT ?= $(shell pkg-config --exists libpqxx prometheus-cpp-pull && echo yes || echo missing)
ifeq ($(WITH_REPORT),missing)
$(warning libpqxx or prometheus-cpp not found (pkg-config libpqxx prometheus-cpp-pull): pg_stat_waits_report is not built; install libpqxx-dev prometheus-cpp-dev)
endif
ifeq ($(WITH_REPORT),yes)
REPORT_BIN = tools/report/pg_stat_waits_report
REPORT_SRCS = $(wildcard tools/report/*.cpp)
REPORT_CXXFLAGS = -std=c++17 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror \
                  $(shell pkg-config --cflags libpqxx prometheus-cpp-pull) -I$(shell $(PG_CONFIG) --includedir)
REPORT_LIBS = $(shell pkg-config --libs libpqxx prometheus-cpp-pull) -lcivetweb-cpp -lcivetweb -lpthread \
              -L$(shell $(PG_CONFIG) --libdir) -lpq

all: $(REPORT_BIN)

$(REPORT_BIN): $(REPORT_SRCS) $(wildcard tools/report/*.h)
	$(CXX) $(REPORT_CXXFLAGS) $(CPPFLAGS_REPORT) -o $@ $(REPORT_SRCS) $(LDFLAGS_REPORT) $(REPORT_LIBS)

install: install-report
install-report: $(REPORT_BIN)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(REPORT_BIN) '$(DESTDIR)$(bindir)/pg_stat_waits_report'

uninstall: uninstall-report
uninstall-report:
	rm -f '$(DESTDIR)$(bindir)/pg_stat_waits_report'

EXTRA_CLEAN += $(REPORT_BIN)
.PHONY: install-report uninstall-report
endif
