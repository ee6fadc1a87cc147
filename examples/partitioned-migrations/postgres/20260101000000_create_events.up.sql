-- events keyed by COMB ids (UUIDv7), one partition per month of 2026's first quarter and a
-- DEFAULT partition. The partitions are the output of
--   combkey sql postgres partitions --table events --interval month --from 2026-01-01 --to 2026-04-01 --default
-- and a scheduled job adds the next months and drops the old ones with the same command's
-- --add N --after DATE and --from DATE --drop-before DATE.
CREATE TABLE events (
  id uuid NOT NULL,
  kind text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (id)
) PARTITION BY RANGE (id);
-- combkey: events partitioned by month of its COMB key id, 2026-01-01T00:00:00.000Z to 2026-04-01T00:00:00.000Z.
-- The table must be partitioned by its key, e.g.:
--   CREATE TABLE events (id uuid NOT NULL, ..., PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE IF NOT EXISTS events_2026_01 PARTITION OF events FOR VALUES FROM ('019b76da-a800-7000-8000-000000000000') TO ('019c167f-cc00-7000-8000-000000000000');
CREATE TABLE IF NOT EXISTS events_2026_02 PARTITION OF events FOR VALUES FROM ('019c167f-cc00-7000-8000-000000000000') TO ('019ca6b1-dc00-7000-8000-000000000000');
CREATE TABLE IF NOT EXISTS events_2026_03 PARTITION OF events FOR VALUES FROM ('019ca6b1-dc00-7000-8000-000000000000') TO ('019d4657-0000-7000-8000-000000000000');
CREATE TABLE events_default PARTITION OF events DEFAULT;
