// The patterns diesel's users rely on, shared by the backend test files (`include!`d by
// postgres.rs, mysql.rs and sqlite.rs, whose `table!`s give the id column its backend's SQL
// type `IdSql`, and which define `connect()`, `literal()`, `plan()`, `Order`, `Item` and the
// tables `combkey_orders`, `combkey_items` and `combkey_legacy` (a table keyed by UUID text)).

#[test]
fn left_join_with_a_missing_right_side_reads_none() {
    use self::combkey_items::dsl as i;
    use self::combkey_orders::dsl as o;
    let mut c = connect();
    let with = Order { id: Comb::new(), parent: None, note: "with an item".into() };
    let without = Order { id: Comb::new(), parent: None, note: "without".into() };
    let both = vec![with.clone(), without.clone()];
    diesel::insert_into(o::combkey_orders).values(&both).execute(&mut c).unwrap();
    let item = Item { id: Comb::new(), order_id: with.id, n: 7 };
    diesel::insert_into(i::combkey_items).values(&item).execute(&mut c).unwrap();
    // A nullable tuple of the right side's columns.
    let rows: Vec<(Comb, Option<(Comb, i32)>)> = o::combkey_orders
        .left_join(i::combkey_items)
        .select((o::id, (i::id, i::n).nullable()))
        .order(o::id.asc())
        .load(&mut c)
        .unwrap();
    assert_eq!(rows, [(with.id, Some((item.id, 7))), (without.id, None)]);
    // `Option::<T>::as_select()` of a Selectable keyed by the type.
    let rows: Vec<(Order, Option<Item>)> = o::combkey_orders
        .left_join(i::combkey_items)
        .select((Order::as_select(), Option::<Item>::as_select()))
        .order(o::id.asc())
        .load(&mut c)
        .unwrap();
    assert_eq!(rows, [(with.clone(), Some(item)), (without.clone(), None)]);
    // The key itself on the nullable side: a nullable self-join through `parent`.
    let orphans: Vec<(Comb, Option<Comb>)> =
        o::combkey_orders.select((o::id, o::parent)).filter(o::parent.is_null()).order(o::id.asc()).load(&mut c).unwrap();
    assert_eq!(orphans, [(with.id, None), (without.id, None)]);
}

#[test]
fn text_keys_read_and_write() {
    use self::combkey_legacy::dsl::{combkey_legacy as legacy, id, note};
    let mut c = connect();
    let ids: Vec<CombText> = (0..3).map(|_| CombText::new()).collect();
    for (n, key) in ids.iter().enumerate() {
        diesel::insert_into(legacy).values((id.eq(key), note.eq(format!("row {n}")))).execute(&mut c).unwrap();
    }
    // Written as the canonical text, so the database's own text compares equal.
    let stored: String = legacy.select(sql::<Text>("id")).filter(note.eq("row 1")).first(&mut c).unwrap();
    assert_eq!(stored, ids[1].to_string());
    // WHERE text_key = ? finds the row.
    let found: String = legacy.filter(id.eq(ids[2])).select(note).first(&mut c).unwrap();
    assert_eq!(found, "row 2");
    let back: Vec<CombText> = legacy.select(id).order(id.asc()).load(&mut c).unwrap();
    assert_eq!(back, ids, "canonical text sorts in creation order");
    // Other text forms a legacy table may hold read too; bad text is an error naming it.
    let upper: CombText = diesel::select(sql::<Text>(&format!("'{:#}'", ids[0]))).get_result(&mut c).unwrap();
    assert_eq!(upper, ids[0]);
    let err = diesel::select(sql::<Text>("'garbage'")).get_result::<CombText>(&mut c).unwrap_err();
    assert!(common::chain(&err).contains("invalid UUID length"), "{err}");
    let err = diesel::select(sql::<Text>("NULL")).get_result::<CombText>(&mut c).unwrap_err();
    assert!(common::is_unexpected_null(&err), "{err}");
    let none: Option<CombText> = diesel::select(sql::<Nullable<Text>>("NULL")).get_result(&mut c).unwrap();
    assert_eq!(none, None);
}

/// diesel's own type tests (`diesel_tests/tests/types.rs`: `pg_uuid_from_sql` and
/// `pg_uuid_to_sql_uuid` through `query_single_value` and `query_to_sql_equality`, with their
/// ids; `types_roundtrip.rs`: `uuid_roundtrips`, a round trip of any value and of its
/// `Nullable`), for this column type in every backend's id column.
#[test]
fn diesel_type_tests_ported() {
    let mut c = connect();
    let a: Comb = "8a645207-42d6-4d17-82e7-f5e42ede0f67".parse().unwrap();
    let b: Comb = "f94e0e4d-c7b0-405f-9c0e-57b97f4afb58".parse().unwrap();
    for v in [a, b] {
        let lit = literal(v);
        // query_single_value
        assert_eq!(diesel::select(sql::<IdSql>(&lit)).get_result::<Comb>(&mut c).unwrap(), v);
        // query_to_sql_equality: (lit IS NULL AND value IS NULL) OR lit = value
        let mut equal = |lit: &str, value: Comb| -> bool {
            diesel::select(
                sql::<IdSql>(lit)
                    .is_null()
                    .and(value.into_sql::<IdSql>().is_null())
                    .or(sql::<IdSql>(lit).eq(value.into_sql::<IdSql>())),
            )
            .get_result(&mut c)
            .unwrap()
        };
        assert!(equal(&lit, v));
        let other: Comb = "8e940686-97a5-4e8b-ac44-64cf3cceea9b".parse().unwrap();
        assert!(!equal(&literal(other), v), "a different id is not equal");
    }
    let r = combkey::SeededRandom::new(77);
    for _ in 0..200 {
        use combkey::RandomSource;
        let v = Comb::from(combkey::Comb::from_u128((u128::from(r.next_u64()) << 64) | u128::from(r.next_u64())));
        let back: Comb = diesel::select(v.into_sql::<IdSql>()).get_result(&mut c).unwrap();
        assert_eq!(back, v);
        for opt in [Some(v), None] {
            let back: Option<Comb> = diesel::select(opt.into_sql::<Nullable<IdSql>>()).get_result(&mut c).unwrap();
            assert_eq!(back, opt);
        }
    }
}

/// "Orders created in this hour" through the key: exactly the rows whose id carries a time
/// in the range, answered from the primary key's index.
#[test]
fn rows_created_in_a_time_range() {
    use combkey_diesel::CreatedInExpressionMethods;
    use self::combkey_orders::dsl::{combkey_orders as orders, id};
    let mut c = connect();
    // 2,000 orders made one second apart (the generator's `_at` API), inserted shuffled.
    let t0 = combkey::Timestamp::from_unix_ms(1_700_000_000_000);
    let g = combkey::V7Generator::new();
    let made: Vec<Comb> = (0..2_000).map(|i| Comb::from(g.generate_at(t0.saturating_add_ms(1_000 * i)))).collect();
    let mut shuffled: Vec<Order> = made.iter().map(|i| Order { id: *i, parent: None, note: "n".into() }).collect();
    shuffled.reverse();
    for chunk in shuffled.chunks(500) {
        diesel::insert_into(orders).values(chunk).execute(&mut c).unwrap();
    }
    // Seconds 600 to 659 (one minute): ids 600..660.
    let range = combkey::Comb::range(t0.saturating_add_ms(600_000)..t0.saturating_add_ms(660_000)).unwrap();
    let minute: Vec<Comb> = orders.select(id).filter(id.created_in(range)).order(id.asc()).load(&mut c).unwrap();
    assert_eq!(minute, &made[600..660]);
    let query = format!(
        "SELECT id FROM combkey_orders WHERE id BETWEEN {} AND {}",
        literal(Comb::from(range.start())),
        literal(Comb::from(range.last()))
    );
    let plan = plan(&mut c, &query);
    assert!(uses_primary_key(&plan), "{query}\n{plan}");
}
