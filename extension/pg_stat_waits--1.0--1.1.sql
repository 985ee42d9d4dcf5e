-- pg_stat_waits 1.0 -> 1.1
\echo Use "ALTER EXTENSION pg_stat_waits UPDATE TO '1.1'" to load this file. \quit

-- Each change below is also in pg_stat_waits--1.1.sql (the fresh install);
-- the upgrade test compares the two.
