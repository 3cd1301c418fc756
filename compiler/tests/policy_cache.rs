//! A set loaded through a [`PolicyCache`] is the set `compile_text` and `insert` load: the cache
//! compiles no program for the set (it reads the optimized IR alone, except for `eventbridge`),
//! so this holds every conformance vector's policy, of every dialect, to the same saved set, the
//! same deliveries and the same errors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use filtervm_compiler::{
    CachedInsertError, Dialect, Options, PolicyCache, SubscriptionSet, compile_text,
};
use filtervm_vm::json;
use support::all_cases;

mod support;

#[test]
fn every_vector_policy_loads_through_the_cache_as_compiled_and_inserted() {
    let mut cache = PolicyCache::new(1 << 16);
    let mut cached = SubscriptionSet::<u64>::new();
    let mut compiled = SubscriptionSet::<u64>::new();
    let (mut loaded, mut refused) = (0, 0);
    for (id, case) in all_cases().iter().enumerate() {
        let id = id as u64;
        let field = |name: &str| case.get(name).and_then(json::Value::as_str).unwrap_or("?");
        let Ok(dialect) = field("dialect").parse::<Dialect>() else {
            continue;
        };
        let Ok(options) =
            Options::from_json(dialect, case.get("options").unwrap_or(&json::Value::Null))
        else {
            continue;
        };
        let Some(policy) = case.get("policy") else {
            continue;
        };
        let text = policy.to_string();
        let through_cache = cache.insert(&mut cached, id, dialect, &text, &options);
        match compile_text(dialect, &text, &options) {
            Ok(filter) => {
                let inserted = compiled.insert(id, &filter);
                match (&through_cache, &inserted) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", field("id")),
                    (Err(CachedInsertError::Insert(a)), Err(b)) => {
                        assert_eq!(a.to_string(), b.to_string(), "{}", field("id"))
                    }
                    _ => panic!(
                        "{}: through the cache {through_cache:?}, compiled {inserted:?}",
                        field("id")
                    ),
                }
                loaded += 1;
            }
            Err(expected) => {
                let Err(CachedInsertError::Compile(got)) = &through_cache else {
                    panic!(
                        "{}: refused by compile_text ({expected}), cache gave {through_cache:?}",
                        field("id")
                    );
                };
                assert_eq!(
                    (got.code(), got.to_string()),
                    (expected.code(), expected.to_string()),
                    "{}",
                    field("id")
                );
                refused += 1;
            }
        }
        // Given again, the text is found, and both sets still agree.
        if through_cache.is_ok() {
            let hits = cache.hits();
            cache
                .insert(&mut cached, id, dialect, &text, &options)
                .unwrap();
            assert!(
                cache.hits() == hits + 1 || dialect == Dialect::EventBridge,
                "{} compiled again",
                field("id")
            );
        }
    }
    assert!(
        loaded > 500 && refused > 100,
        "{loaded} loaded, {refused} refused"
    );
    assert_eq!(cached.len(), compiled.len());
    assert_eq!(cached.distinct_filters(), compiled.distinct_filters());
    // The saved form holds every group's filters' code, tests and subscriptions.
    assert!(
        cached.to_bytes() == compiled.to_bytes(),
        "the saved sets differ"
    );
}
