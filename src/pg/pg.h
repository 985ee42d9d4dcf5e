// The way C++ files include PostgreSQL headers (docs/architecture.md,
// "Boundary rules"): postgres.h must come first, and everything is C, so one
// file includes them all in order inside extern "C". Besides this file only
// the compat layer (compat*.h, compat*.cpp) includes PostgreSQL headers, for
// the ones that differ between majors; a header another file of src/pg needs
// is added here (tools/check_layers.pl fails otherwise). src/core/ never
// includes this. Version differences are above it, in compat.h (which
// includes it).
#pragma once

// PG 15 defines PGDLLEXPORT empty on ELF; with -fvisibility=hidden the magic
// block and PG_FUNCTION_INFO_V1 symbols must be exported explicitly.
#ifndef PGDLLEXPORT
#define PGDLLEXPORT __attribute__((visibility("default")))
#endif

extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/prepare.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "executor/executor.h"
#include "executor/nodeGather.h"
#include "executor/nodeGatherMerge.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/dsm.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "tcop/pquery.h"
#include "utils/portal.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"
#include "utils/wait_event.h"
// From libpq/libpq.h, which is not included: it pulls in libpq-be.h, which
// needs GSSAPI's headers where the server was built with GSSAPI (Debian's).
extern bool pq_is_reading_msg(void);
}

// Exported PostgreSQL entry points (the library is built with
// -fvisibility=hidden; PG_FUNCTION_INFO_V1 already exports its symbols).
#define PSW_EXPORT extern "C" __attribute__((visibility("default")))

// Declares an exported SQL-callable function. PG 15's PG_FUNCTION_INFO_V1
// marks only the info function for export, so the function itself is
// declared visible first.
#define PSW_SQL_FUNCTION(name)                             \
    extern "C" PGDLLEXPORT Datum name(PG_FUNCTION_ARGS);   \
    extern "C" {                                           \
    PG_FUNCTION_INFO_V1(name);                             \
    }
