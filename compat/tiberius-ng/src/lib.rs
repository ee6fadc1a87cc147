//! Empty: the tests are combkey-tiberius's own (tests/).
