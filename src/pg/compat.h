// Version differences live here so PostgreSQL 16-18 are a port, not a rewrite.
#pragma once

#if PG_VERSION_NUM < 150000
#error "pg_stat_waits needs PostgreSQL 15 or later"
#endif

// PG 15 introduced shmem_request_hook; PG 16 renamed BackendId usage and
// PG 17 replaced MyBackendId with MyProcNumber. Keep those touches here.
#if PG_VERSION_NUM >= 170000
#define PSW_MY_PROCNO MyProcNumber
#else
#define PSW_MY_PROCNO (MyProc ? MyProc->pgprocno : -1)
#endif
