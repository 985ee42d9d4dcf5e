-- GUCs: defaults, contexts, and refusal of bad values.
SELECT name, setting, unit, context, vartype, min_val, max_val, enumvals
  FROM pg_settings WHERE name LIKE 'pg_stat_waits.%' ORDER BY name;

-- sighup and postmaster settings cannot be changed in a session.
SET pg_stat_waits.sample_period = 20;
SET pg_stat_waits.history_size = 10;

-- Out of range / unknown values are refused, not clamped.
ALTER SYSTEM SET pg_stat_waits.sample_period = 1001;
ALTER SYSTEM SET pg_stat_waits.sample_period = -1;
ALTER SYSTEM SET pg_stat_waits.profile_max = 0;
SET pg_stat_waits.track = 'everything';
SET pg_stat_waits.timing = 'maybe';
SET pg_stat_waits.capture_min_duration = -2;
SET pg_stat_waits.capture_min_duration = 'soon';
SET pg_stat_waits.capture_min_duration = '1 fortnight';
SET pg_stat_waits.capture_log = 'sometimes';
SET pg_stat_waits.no_such_setting = 1;

-- suset settings work for a superuser, per session.
SET pg_stat_waits.track = 'all';
SHOW pg_stat_waits.track;
SET pg_stat_waits.timing = on;
SHOW pg_stat_waits.timing;
RESET pg_stat_waits.track;
RESET pg_stat_waits.timing;
SET pg_stat_waits.capture_min_duration = '2.5s';
SHOW pg_stat_waits.capture_min_duration;
SET pg_stat_waits.capture_min_duration = -1;
SHOW pg_stat_waits.capture_min_duration;
RESET pg_stat_waits.capture_min_duration;
SET pg_stat_waits.capture_log = on;
SHOW pg_stat_waits.capture_log;
RESET pg_stat_waits.capture_log;
