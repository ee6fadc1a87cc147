DROP TABLE events; -- its partitions go with it
