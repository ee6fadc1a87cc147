//! Code written for `uuid::Uuid` compiles with only the type changed to `combkey::Comb`, and
//! observes the same.

combkey_testutil::uuid_swap_test!(combkey::Comb);
