-- The Spider head of docker-compose.yml's `spider` profile: the storage engine and the three
-- backends as servers b1, b2, b3 (what scripts/spider.sh does for private servers).
INSTALL SONAME 'ha_spider';
CREATE OR REPLACE SERVER b1 FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'spider-b1', PORT 3306, USER 'root', PASSWORD '', DATABASE 'test');
CREATE OR REPLACE SERVER b2 FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'spider-b2', PORT 3306, USER 'root', PASSWORD '', DATABASE 'test');
CREATE OR REPLACE SERVER b3 FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'spider-b3', PORT 3306, USER 'root', PASSWORD '', DATABASE 'test');
