//! Empty: the tests are combkey-mysql's own (tests/mariadb.rs).
