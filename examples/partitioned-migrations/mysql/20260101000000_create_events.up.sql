-- events keyed by COMB ids (UUIDv7) stored as BINARY(16), one partition per month of 2026's
-- first quarter, p_before for older ids and pmax for later ones. The ALTER TABLE is the output of
--   combkey sql mysql partitions --table events --interval month --from 2026-01-01 --to 2026-04-01 --default
-- and a scheduled job adds the next months (REORGANIZE PARTITION pmax) and drops the old ones
-- with the same command's --add N --after DATE --default and --from DATE --drop-before DATE.
CREATE TABLE events (
  id BINARY(16) NOT NULL,
  kind VARCHAR(64) NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (id)
);
-- combkey: events partitioned by month of its COMB key id, 2026-01-01T00:00:00.000Z to 2026-04-01T00:00:00.000Z.
-- The key must be the table's primary key, BINARY(16). p_before holds ids older than 2026-01-01T00:00:00.000Z.
ALTER TABLE events PARTITION BY RANGE COLUMNS(id) (
  PARTITION p_before VALUES LESS THAN (0x019B76DAA80070008000000000000000),
  PARTITION p2026_01 VALUES LESS THAN (0x019C167FCC0070008000000000000000),
  PARTITION p2026_02 VALUES LESS THAN (0x019CA6B1DC0070008000000000000000),
  PARTITION p2026_03 VALUES LESS THAN (0x019D4657000070008000000000000000),
  PARTITION pmax VALUES LESS THAN (MAXVALUE)
);
