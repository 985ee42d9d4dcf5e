# Instructions per pgbench transaction (callgrind): what each tool adds to a
# whole TPC-B-like transaction of a client over a Unix socket (BEGIN, three
# UPDATEs, a SELECT, an INSERT, END: seven round trips), counted instead of
# timed. The throughput section measures the same workload in transactions
# per second, but on a shared 2-core machine its rounds move by more than
# any of these tools costs; this count is deterministic enough to compare.
# Sourced by bench_callgrind.sh (cg_postmaster_start, cg_totals, cg_measure_configs,
# cg_client_table; bench_cg_breakdown.sh: cg_allocator_metrics).
# shellcheck shell=bash

# The same transactions in every run: pgbench's random account, teller and
# branch choices come from this seed.
CG_PGBENCH_SEED=7

# cg_pgbench_template DIR: DIR/data, a cluster initialized by pgbench -i
# (scale 1: 100,000 accounts) and shut down cleanly. Each configuration's
# run starts from a copy of it, so all see the same rows and the same cache
# state at the start.
cg_pgbench_template() {
  local dir=$1 port
  mkdir -p "$dir"; chmod 755 "$dir"
  [ "$(id -u)" -eq 0 ] && chown "$PSW_OS_USER" "$dir"
  as_os_user "$PSW_BINDIR/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C \
    >/dev/null || return 1
  port=$(free_port 55720)
  as_os_user "$PSW_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/init.log" -w -t 120 \
    -o "-p $port -k $dir -c listen_addresses=" start >/dev/null || return 1
  "$PSW_BINDIR/pgbench" -h "$dir" -p "$port" -U postgres -i -q -s 1 postgres >/dev/null 2>&1
  local rc=$?
  as_os_user "$PSW_BINDIR/pg_ctl" -D "$dir/data" -m fast -w -t 120 stop >/dev/null 2>&1
  return $rc
}

# cg_children PID: the pids of PID's children, one per line.
cg_children() { ps -o pid= --ppid "$1" | tr -d ' ' | sort; }

# cg_pgbench_profile DIR BEFORE POSTMASTER KIDS: "count profile", the
# instruction count and profile of the client's backend among the profiles
# DIR gained since BEFORE (a listing of
# DIR). A profile is written when its process exits, so first every child
# of the postmaster that KIDS (its children before the run: the background
# processes) does not list must be gone. pgbench also opens a short
# connection first (it reads the scale), so the client's is the largest.
cg_pgbench_profile() {
  local dir=$1 before=$2 pm=$3 kids=$4 f c best="" best_f=""
  for _ in $(seq 240); do
    [ -z "$(comm -23 <(cg_children "$pm") <(echo "$kids"))" ] && break
    sleep 0.5
  done
  for f in "$dir"/cg.*; do
    grep -qxF "${f##*/}" <<<"$before" && continue
    for _ in $(seq 20); do
      c=$(cg_totals "$f")
      [ -n "$c" ] && break
      sleep 0.5
    done
    [ -n "$c" ] && { [ -z "$best" ] || [ "$c" -gt "$best" ]; } && best=$c best_f=$f
  done
  [ -n "$best" ] && echo "$best $best_f"
}

# callgrind_pgbench_slope TEMPLATE N CONFIG: instructions per transaction of
# one pgbench client (tpcb-like, simple protocol), the slope between N and 2N
# transactions run one after the other on a fresh copy of TEMPLATE.
callgrind_pgbench_slope() {
  local template=$1 n=$2 cfg=$3 dir k before pm kids c f f1="" i1="" i2=""
  dir=$BENCH_CG_DIR/pgb_$cfg
  rm -rf "$dir"; mkdir -p "$dir"
  cp -a "$template/data" "$dir/data"
  # 18's default io_method hands reads to io workers, and how much of a read
  # the backend then does itself depends on when the worker finishes: four
  # identical runs spread over 1,200 instructions/transaction (60 with sync).
  local iom=()
  [ "$PSW_PG_MAJOR" -ge 18 ] && iom=(-c io_method=sync)
  # Each commit flushes its own WAL (synchronous_commit = on; fsync = off
  # leaves that a write): with an asynchronous commit, whether a later
  # visibility check may set a hint bit or must look the transaction up
  # again depends on how far the WAL writer has got, which moved the count
  # by up to 4,300 instructions/transaction between four identical runs on 18.
  cg_postmaster_start "$dir/data" "$dir" "$cfg" -c max_connections=100 -c synchronous_commit=on -c fsync=off \
    "${iom[@]}"
  pm=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null)
  for k in "$n" "$((2 * n))"; do
    before=$(ls "$dir" 2>/dev/null)
    kids=$(cg_children "$pm")
    "$PSW_BINDIR/pgbench" -h "$dir" -p "$CG_PORT" -U postgres -n -b tpcb-like -c 1 -t "$k" \
      --random-seed="$CG_PGBENCH_SEED" postgres >"$dir/pgbench$k.out" 2>&1
    c="" f=""
    read -r c f < <(cg_pgbench_profile "$dir" "$before" "$pm" "$kids") || true
    if [ "$k" = "$n" ]; then i1=$c f1=$f; else i2=$c; fi
  done
  cg_postmaster_stop "$dir/data"
  rm -rf "$dir/data"
  if [ -z "$i1" ] || [ -z "$i2" ]; then echo NA; return 0; fi
  cg_allocator_metrics callgrind_pgbench "$cfg" "$n" "$f1" "$f"
  [ "$cfg" = psw_timing ] && cg_breakdown_files callgrind_pgbench_self "$cfg" "$n" "$f1" "$f"
  cg_slope "$i1" "$i2" "$n"
}

# bench_cg_pgbench QUICK: the measurements (metrics section callgrind_pgbench).
bench_cg_pgbench() {
  local quick=$1 n
  n=$([ "$quick" = 1 ] && echo 250 || echo 500)
  log "bench: instructions per pgbench transaction (callgrind, tpcb-like, N=$n and 2N)"
  cg_pgbench_template "$BENCH_CG_DIR/pgb_template" || { log "bench: pgbench -i failed"; return 0; }
  metric callgrind_pgbench none_qid transactions "$n" count
  cg_measure_configs callgrind_pgbench instr_per_tx callgrind_pgbench_slope "$BENCH_CG_DIR/pgb_template" "$n"
}

# bench_cg_pgbench_render: its table, inside section 1.
bench_cg_pgbench_render() {
  local base
  base=$(metric_get callgrind_pgbench none_qid instr_per_tx)
  [ -n "$base" ] && [ "$base" != NA ] || return 0
  md "" "Per pgbench transaction: one pgbench client (\`-b tpcb-like\`, simple protocol, the same seed in every"
  md "run; synchronous_commit = on with fsync = off, so that each commit's WAL is written before the next"
  md "transaction's visibility checks, which an asynchronous commit left to the WAL writer's timing;"
  md "io_method = sync from 18 on) runs N=$(metric_get callgrind_pgbench none_qid transactions) and then 2N transactions against a"
  md "postmaster under callgrind, each configuration on a fresh copy of one \`pgbench -i -s 1\` cluster;"
  md "instructions per transaction of the client's backend = the slope. A transaction is seven statements"
  md "and seven round trips (BEGIN, three UPDATEs, a SELECT, an INSERT, END), with real reads of table"
  md "pages: the per-transaction cost that section 3's transactions per second cannot resolve on a"
  md "noisy machine. Every run sets compute_query_id = on, so the first row is the baseline." ""
  cg_client_table callgrind_pgbench instr_per_tx transaction
  md "" "The baseline measured again after the others: $(fmt "$(metric_get callgrind_pgbench none_qid instr_per_tx_repeat)")"
  md "instructions/transaction$(cg_repeat_alloc callgrind_pgbench). As over a socket above, a configuration's figure also moves by a few"
  md "hundred instructions with PostgreSQL's and libc's own state (the allocator, split out as there,"
  md "and catalog-cache paths that differ with what is loaded), so only differences well above that"
  md "are a tool's own cost. Target with timing on (issue 56): at most +0.5 % per transaction." ""
  callgrind_breakdown_render psw_timing callgrind_pgbench_self transaction "the pgbench client's backend"
}
