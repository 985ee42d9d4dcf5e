#!/usr/bin/python3
"""Checks exporters/ against a real server (psql from PATH, libpq env).

Every query of the postgres_exporter file runs, and returns exactly the
columns its metrics promise, with numbers in the metric columns; a query whose
pg_stat_waits objects are not in this server's build is skipped (reported).
Every metric the Grafana dashboard uses is one the query file produces.
With --exporter BIN, the real postgres_exporter scrapes the server and its
/metrics must carry each metric of every runnable query.
Prints TAP-like lines: ok / not ok / skip.
"""
import csv
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

import yaml

USAGES = {"LABEL", "GAUGE", "COUNTER", "DISCARD", "MAPPEDMETRIC", "DURATION", "HISTOGRAM"}
results = {"ok": 0, "not ok": 0, "skip": 0}


def report(status, what):
    results[status] += 1
    print("%s - %s" % (status, what))


def psql(sql, db):
    out = subprocess.run(["psql", "-X", "-q", "--csv", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                         capture_output=True, text=True)
    return out.returncode, out.stdout, out.stderr.strip()


def extension_objects(db):
    rc, out, err = psql("""SELECT coalesce(c.relname, p.proname) AS name FROM pg_depend d
        LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
        LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
        WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
          AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_stat_waits')""", db)
    if rc != 0:
        sys.exit("cannot list pg_stat_waits objects: " + err)
    return {r["name"] for r in csv.DictReader(io.StringIO(out))}


def main():
    args = sys.argv[1:]
    exporter = None
    if "--exporter" in args:
        i = args.index("--exporter")
        exporter = args[i + 1]
        del args[i:i + 2]
    queries_path, dashboard_path, db = args
    objects = extension_objects(db)
    spec = yaml.safe_load(open(queries_path))
    produced = {}   # metric name -> namespace
    runnable = []
    for ns, q in spec.items():
        metrics = [(name, body["usage"]) for m in q["metrics"] for name, body in m.items()]
        bad = [n for n, u in metrics if u not in USAGES]
        if bad:
            report("not ok", "%s: unknown usage for %s" % (ns, bad))
            continue
        for name, usage in metrics:
            if usage not in ("LABEL", "DISCARD"):
                produced["%s_%s" % (ns, name)] = ns
        needed = sorted(set(re.findall(r"\bpg_stat_waits\w*", q["query"])))
        missing = [o for o in needed if o not in objects]
        if missing:
            report("skip", "%s: needs %s, not available in this server's pg_stat_waits" % (ns, ", ".join(missing)))
            continue
        rc, out, err = psql(q["query"], db)
        if rc != 0:
            report("not ok", "%s: query fails: %s" % (ns, err))
            continue
        rows = list(csv.reader(io.StringIO(out)))
        header, data = rows[0], rows[1:]
        want = [n for n, u in metrics]
        if sorted(header) != sorted(want):
            report("not ok", "%s: columns %s, promised %s" % (ns, header, want))
            continue
        numeric = [header.index(n) for n, u in metrics if u not in ("LABEL", "DISCARD")]
        nonnum = [r[i] for r in data for i in numeric if not re.fullmatch(r"-?[0-9.e+-]+|NaN|Infinity", r[i])]
        if nonnum:
            report("not ok", "%s: non-numeric metric values %s" % (ns, nonnum[:3]))
            continue
        report("ok", "%s: runs and returns %s (%d rows)" % (ns, ", ".join(header), len(data)))
        runnable.append(ns)

    dash = json.load(open(dashboard_path))
    exprs = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("expr", "definition") and isinstance(v, str):
                    exprs.append(v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(dash)
    used = set()
    for e in exprs:
        used.update(re.findall(r"\bpg_stat_waits_\w+", e))
    unknown = sorted(used - set(produced))
    if dash.get("uid") and dash.get("panels") and exprs and not unknown:
        report("ok", "dashboard: %d panels, %d queries, all %d metrics come from the query file"
               % (len(dash["panels"]), len(exprs), len(used)))
    else:
        report("not ok", "dashboard uses metrics the query file does not produce: %s" % unknown)

    if exporter:
        check_real_exporter(exporter, queries_path, db, spec, runnable)
    print("# %d ok, %d not ok, %d skipped" % (results["ok"], results["not ok"], results["skip"]))
    return 1 if results["not ok"] else 0


def check_real_exporter(binary, queries_path, db, spec, runnable):
    """Runs postgres_exporter on a free port and reads /metrics."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    host = os.environ.get("PGHOST", "/var/run/postgresql")
    dsn = "postgresql://%s@:%s/%s?host=%s&sslmode=disable" % (
        os.environ.get("PGUSER", "postgres"), os.environ.get("PGPORT", "5432"), db, host)
    env = dict(os.environ, DATA_SOURCE_NAME=dsn)
    proc = subprocess.Popen([binary, "--web.listen-address=127.0.0.1:%d" % port,
                             "--extend.query-path=" + queries_path, "--disable-default-metrics",
                             "--disable-settings-metrics"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        body = ""
        for _ in range(50):
            try:
                body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.2)
        if not body:
            report("not ok", "postgres_exporter served no /metrics")
            return
        for ns in runnable:
            names = ["%s_%s" % (ns, n) for m in spec[ns]["metrics"] for n, b in m.items()
                     if b["usage"] not in ("LABEL", "DISCARD")]
            # A query returning no rows (e.g. no timed waits yet) has no samples.
            present = [n for n in names if re.search(r"^%s[{ ]" % n, body, re.M)]
            declared = [n for n in names if re.search(r"^# HELP %s " % n, body, re.M) or n in present]
            if present and len(present) == len(names):
                report("ok", "postgres_exporter exports %s" % ", ".join(names))
            elif not present and not re.search(r"^%s_" % ns, body, re.M):
                rc, out, _ = psql(spec[ns]["query"], db)
                if rc == 0 and len(out.strip().splitlines()) <= 1:
                    report("ok", "postgres_exporter: %s has no rows now, so no samples" % ns)
                else:
                    report("not ok", "postgres_exporter exports nothing for %s" % ns)
            else:
                report("not ok", "postgres_exporter misses %s" % (set(names) - set(present + declared)))
        errors = re.findall(r"^pg_exporter_last_scrape_error (\S+)", body, re.M)
        skipped = len(spec) - len(runnable)
        if errors and float(errors[0]) != 0 and skipped == 0:
            report("not ok", "postgres_exporter reports a scrape error")
        elif errors and float(errors[0]) != 0:
            print("# postgres_exporter scrape error expected: %d queries need objects this build lacks" % skipped)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


sys.exit(main())
