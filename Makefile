# PGXS build of the pg_stat_waits extension (C++17).
#   make && make install
#   make installcheck           pg_regress (test/sql) and isolation (test/specs)
#   make installcheck-nopreload pg_regress without the library preloaded
#   make prove_installcheck     TAP tests (test/t/*.pl)
# The tests run as a non-root user. pg_regress and isolation start a
# temporary instance with test/regress.conf from the installation PG_CONFIG
# names; the TAP tests start their own nodes. Install the extension (and the
# test module, test/modules/pg_stat_waits_test) into that installation first:
# ./run test does all of it in a staged copy of the installation.
# Developers: make PSW_WERROR=1 turns warnings into errors (./run does).
# make PSW_TEST_HOOKS=1 is a test build (./run test and ./run bench make one):
# it adds the entry points of the test module (src/pg/testing/) and the
# sampler's fault check. Without it (make, the packages, ./run build and
# ./run demo) the library exports only the product's SQL functions and what
# PostgreSQL looks up (tools/check_exports.pl checks it).

EXTENSION = pg_stat_waits
MODULE_big = pg_stat_waits
# SQL: sql/pg_stat_waits.sql is the one source of the current version's
# install script, copied at build time to sql/pg_stat_waits--<default_version>.sql
# (not committed; make clean removes it). extension/ keeps what released
# versions need: 1.0's full script (the base older versions install from and
# test/t/040_upgrade.pl updates) and each upgrade step (CONTRIBUTING.md, "Versions");
# extension/compat/ and extension/citus/ hold two companion extensions,
# pg_wait_sampling_compat and pg_stat_waits_citus (SQL only).
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" pg_stat_waits.control)
DATA_built = sql/pg_stat_waits--$(EXTVERSION).sql
DATA = extension/pg_stat_waits--1.0.sql $(wildcard extension/pg_stat_waits--*--*.sql) \
       $(wildcard extension/compat/pg_wait_sampling_compat*) \
       $(wildcard extension/citus/pg_stat_waits_citus*)
PGFILEDESC = "pg_stat_waits - sampled and exact wait-event statistics"

include sources.mk
PSW_TEST_HOOK_FILES = $(wildcard $(PSW_TEST_HOOK_SOURCES))
OBJS = $(patsubst %.cpp,%.o,$(filter-out $(PSW_TEST_HOOK_FILES),$(wildcard $(PSW_CORE_SOURCES) $(PSW_PG_SOURCES))) \
         $(if $(PSW_TEST_HOOKS),$(PSW_TEST_HOOK_FILES)))

# Tests, all under test/.
REGRESS = $(filter-out nopreload,$(basename $(notdir $(wildcard test/sql/*.sql))))
ISOLATION = $(basename $(notdir $(wildcard test/specs/*.spec)))
TAP_TESTS = 1
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))
# Where pg_regress and isolation run: a temporary preloading instance, or a
# running preloaded server with PSW_SERVER='--host=... --port=...'.
PSW_SERVER ?= --temp-instance=tmp_check --temp-config=$(CURDIR)/test/regress.conf
REGRESS_OPTS = --inputdir=test $(PSW_SERVER)
# The isolation specs' temporary instance adds test/isolation.conf (a small
# profile_max, for eviction); a running server given in PSW_SERVER is used as is.
ISOLATION_OPTS = --inputdir=test $(PSW_SERVER) \
    $(if $(findstring --temp-instance,$(PSW_SERVER)),--temp-config=$(CURDIR)/test/isolation.conf)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)

PSW_CXXFLAGS = -std=c++17 -fvisibility=hidden -fvisibility-inlines-hidden $(PSW_WARNINGS) \
               $(if $(PSW_WERROR),-Werror)
PG_CPPFLAGS = -isystem $(shell $(PG_CONFIG) --includedir-server) $(if $(PSW_TEST_HOOKS),-DPSW_TEST_HOOKS)
# The version script keeps the C++ library's template instances (weak
# symbols of namespace std, which -fvisibility=hidden does not hide) out of
# the dynamic symbol table.
SHLIB_LINK = -lstdc++ -Wl,--version-script=$(CURDIR)/src/pg/exports.map

include $(PGXS)

# PGXS adds the server include dir with -I; -isystem above keeps its warnings
# out of -Werror. C++ flags go to both g++ and the LLVM bitcode rule.
override CXXFLAGS += $(PSW_CXXFLAGS)
override BITCODE_CXXFLAGS += -std=c++17 -fvisibility=hidden -Wno-ignored-attributes

# The TAP tests' shared helpers (test/perl/PswTest.pm). PGXS runs the TAP
# tests at the end of installcheck; prove_installcheck runs them alone.
override PG_PROVE_FLAGS += -I $(CURDIR)/test/perl
prove_installcheck:
	$(prove_installcheck)
.PHONY: prove_installcheck

$(DATA_built): sql/pg_stat_waits.sql pg_stat_waits.control
	cp $< $@

# Header dependencies (PGXS tracks them only in --enable-depend builds).
override CXXFLAGS += -MMD -MP
-include $(OBJS:.o=.d)
EXTRA_CLEAN = $(OBJS:.o=.d) tmp_check_nopreload .psw-build-kind

# A release and a test build compile the same files differently: objects
# are rebuilt when the kind changes (the file changes only then).
PSW_BUILD_KIND = $(if $(PSW_TEST_HOOKS),test,release)
.psw-build-kind: FORCE
	@[ "$$(cat $@ 2>/dev/null)" = $(PSW_BUILD_KIND) ] || echo $(PSW_BUILD_KIND) >$@
$(OBJS) $(OBJS:.o=.bc) $(shlib): .psw-build-kind
$(shlib): src/pg/exports.map
.PHONY: FORCE

# pg_regress against an instance without the library preloaded: what the
# extension does when it cannot start (test/sql/nopreload.sql).
PSW_SERVER_NOPRELOAD ?= --temp-instance=tmp_check_nopreload
installcheck-nopreload:
	$(pg_regress_installcheck) --inputdir=test $(PSW_SERVER_NOPRELOAD) nopreload
.PHONY: installcheck-nopreload

# The pg_wait_sampling drop-in (extension/pg_wait_sampling/: an extension named
# pg_wait_sampling, version 1.1, served by this library, for tools that look
# for that name): installed unless another pg_wait_sampling.control is in the
# target directory (pg_wait_sampling itself, e.g. Debian's
# postgresql-NN-pg-wait-sampling), which is never overwritten; the rest is
# installed all the same. A drop-in installed before (its control requires
# pg_stat_waits) is updated. `make install-dropin` installs it alone.
PSW_DROPIN_FILES = extension/pg_wait_sampling/pg_wait_sampling.control extension/pg_wait_sampling/pg_wait_sampling--1.1.sql
PSW_DROPIN_CONTROL = $(DESTDIR)$(datadir)/extension/pg_wait_sampling.control
install: install-dropin
install-dropin:
	$(MKDIR_P) '$(DESTDIR)$(datadir)/extension'
	@if [ -f '$(PSW_DROPIN_CONTROL)' ] && ! grep -q "^requires = 'pg_stat_waits'" '$(PSW_DROPIN_CONTROL)'; then \
	  echo "pg_wait_sampling drop-in NOT installed: $(PSW_DROPIN_CONTROL) is another pg_wait_sampling's (left as is)"; \
	else \
	  $(INSTALL_DATA) $(PSW_DROPIN_FILES) '$(DESTDIR)$(datadir)/extension/'; \
	fi
uninstall: uninstall-dropin
uninstall-dropin:
	@if grep -q "^requires = 'pg_stat_waits'" '$(PSW_DROPIN_CONTROL)' 2>/dev/null; then \
	  rm -f '$(PSW_DROPIN_CONTROL)' '$(DESTDIR)$(datadir)/extension/pg_wait_sampling--1.1.sql'; \
	fi
.PHONY: install-dropin uninstall-dropin

# pg_stat_waits_report (C++17, a libpq client: report, top, and serve, the
# Prometheus exporter) is built with the extension where every one of its
# libraries is found, and installed into PostgreSQL's bindir (DESTDIR
# honoured). A database server needs only the extension: where a library is
# missing, make says which packages would add the program and builds and
# installs the extension (and the drop-in) alone. WITH_REPORT=yes makes a
# missing library an error (packages, CI); WITH_REPORT=no skips the program.
# The libraries are looked up only for the goals that build or install it.
WITH_REPORT ?= auto
PSW_REPORT_GOALS = all install install-report tools/report/pg_stat_waits_report
ifneq ($(WITH_REPORT),no)
ifneq ($(if $(MAKECMDGOALS),$(filter $(PSW_REPORT_GOALS),$(MAKECMDGOALS)),all),)
# pkg-config module:Debian/Ubuntu package:RPM package, and civetweb, which
# has no .pc file on Debian: a compile-and-link probe of what serve uses.
PSW_REPORT_NEEDS = libpqxx:libpqxx-dev:libpqxx-devel prometheus-cpp-pull:prometheus-cpp-dev:prometheus-cpp-devel \
  yaml-cpp:libyaml-cpp-dev:yaml-cpp-devel libxcrypt:libcrypt-dev:libxcrypt-devel \
  libssl:libssl-dev:openssl-devel libcrypto:libssl-dev:openssl-devel
psw_field = $(word $(2),$(subst :, ,$(1)))
PSW_REPORT_MISSING := $(foreach n,$(PSW_REPORT_NEEDS),\
  $(if $(shell pkg-config --exists $(call psw_field,$(n),1) 2>/dev/null && echo y),,$(n)))
PSW_CIVETWEB_PROBE = printf '\#include <CivetServer.h>\nint main() { return mg_version() == nullptr; }\n' | \
  $(CXX) -std=c++17 -x c++ - -o "$$t" -lcivetweb-cpp -lcivetweb -lpthread
PSW_REPORT_MISSING += $(if $(shell t=$$(mktemp) && { $(PSW_CIVETWEB_PROBE); } >/dev/null 2>&1 && echo y; rm -f "$$t"),,\
  civetweb:libcivetweb-dev:civetweb-devel)
ifeq ($(strip $(PSW_REPORT_MISSING)),)
REPORT_BIN = tools/report/pg_stat_waits_report
else
define PSW_REPORT_PACKAGES
$(foreach n,$(PSW_REPORT_MISSING),$(call psw_field,$(n),1)) not found.
  To add it, install:  Debian/Ubuntu: $(sort $(foreach n,$(PSW_REPORT_MISSING),$(call psw_field,$(n),2)))
                       RHEL/Fedora:   $(sort $(foreach n,$(PSW_REPORT_MISSING),$(call psw_field,$(n),3)))
endef
ifeq ($(WITH_REPORT),yes)
$(error WITH_REPORT=yes but pg_stat_waits_report cannot be built: $(PSW_REPORT_PACKAGES))
endif
define PSW_REPORT_MISSING_TEXT
pg_stat_waits_report (report, top, serve) is not built: $(PSW_REPORT_PACKAGES)
  The extension does not need it: it is built and installed all the same.
endef
$(info $(PSW_REPORT_MISSING_TEXT))
endif
endif
endif

# The program's objects are compiled one by one (make -j), with its own
# flags: not the extension's (-fPIC, hidden visibility, the server's headers).
REPORT_SRCS = $(PSW_REPORT_CORE_SOURCES) $(PSW_REPORT_MAIN_SOURCES)
REPORT_OBJS = $(REPORT_SRCS:.cpp=.o)
REPORT_SSL_SHIM = tools/report/libssl-civetweb.so
EXTRA_CLEAN += tools/report/pg_stat_waits_report $(REPORT_OBJS) $(REPORT_OBJS:.o=.d) $(REPORT_SSL_SHIM)
REPORT_TLS_DIR = $(bindir)/../lib/pg_stat_waits_report
uninstall: uninstall-report
uninstall-report:
	rm -f '$(DESTDIR)$(bindir)/pg_stat_waits_report' '$(DESTDIR)$(REPORT_TLS_DIR)/libssl.so' \
	  '$(DESTDIR)$(REPORT_TLS_DIR)/libcrypto.so'
.PHONY: install-report uninstall-report

ifdef REPORT_BIN
# serve's web config: yaml-cpp, libxcrypt (bcrypt), OpenSSL (TLS).
REPORT_PKGS = libpqxx prometheus-cpp-pull yaml-cpp libxcrypt libssl libcrypto
REPORT_CXXFLAGS := -std=c++17 -O2 -g $(PSW_WARNINGS) $(if $(PSW_WERROR),-Werror) -MMD -MP \
                   $(shell pkg-config --cflags $(REPORT_PKGS)) -I$(shell $(PG_CONFIG) --includedir)
REPORT_LIBS := $(shell pkg-config --libs $(REPORT_PKGS)) -lcivetweb-cpp -lcivetweb -lpthread \
               -L$(shell $(PG_CONFIG) --libdir) -lpq
# TLS: civetweb (Debian 12's 1.15) loads OpenSSL by dlopen("libssl.so") and
# dlopen("libcrypto.so"), names only libssl-dev ships, and expects OpenSSL
# 1.1's SSL_get_peer_certificate, which OpenSSL 3 lacks (it crashes on the
# first TLS connection without it). The program carries a DT_RPATH (which,
# unlike DT_RUNPATH, dlopen calls made by its libraries search too) to a
# directory of its own beside bindir, where install-report puts a
# "libssl.so" built from tools/report/civetweb_openssl3.c (libssl.so.3 plus
# that function) and a "libcrypto.so" link to libcrypto.so.3: TLS works with
# libssl3 alone.
REPORT_RPATH = -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../lib/pg_stat_waits_report'
report_runtime_lib = $(shell readlink -f "$$($(CXX) -print-file-name=$(1))")

all: $(REPORT_BIN) $(REPORT_SSL_SHIM)

$(REPORT_SSL_SHIM): tools/report/civetweb_openssl3.c
	$(CC) -shared -fPIC -O2 -Wall $(if $(PSW_WERROR),-Werror) $(shell pkg-config --cflags libssl) -o $@ $< \
	  -Wl,-z,defs $(shell pkg-config --libs libssl)

$(REPORT_OBJS): tools/report/%.o: tools/report/%.cpp
	$(CXX) $(REPORT_CXXFLAGS) $(CPPFLAGS_REPORT) -c -o $@ $<
-include $(REPORT_OBJS:.o=.d)

$(REPORT_BIN): $(REPORT_OBJS)
	$(CXX) -o $@ $(REPORT_OBJS) $(LDFLAGS_REPORT) $(REPORT_LIBS) $(REPORT_RPATH)

install: install-report
install-report: $(REPORT_BIN) $(REPORT_SSL_SHIM)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(REPORT_BIN) '$(DESTDIR)$(bindir)/pg_stat_waits_report'
	$(MKDIR_P) '$(DESTDIR)$(REPORT_TLS_DIR)'
	rm -f '$(DESTDIR)$(REPORT_TLS_DIR)/libssl.so'
	$(INSTALL_SHLIB) $(REPORT_SSL_SHIM) '$(DESTDIR)$(REPORT_TLS_DIR)/libssl.so'
	ln -sf '$(call report_runtime_lib,libcrypto.so)' '$(DESTDIR)$(REPORT_TLS_DIR)/libcrypto.so'
else
install-report:
	@echo "pg_stat_waits_report is not installed$(if $(filter no,$(WITH_REPORT)), (WITH_REPORT=no), (see above))"
endif
