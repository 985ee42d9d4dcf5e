-- Without shared_preload_libraries the extension refuses to install.
CREATE EXTENSION pg_stat_waits;
SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_waits';
