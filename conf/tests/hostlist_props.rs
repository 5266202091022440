use std::collections::BTreeSet;

use proptest::prelude::*;
use slurm_conf::hostlist::natural_cmp;
use slurm_conf::{compress, expand, Hostlist};

/// Host sets: a few prefixes, numbers of one zero-padding width per prefix.
fn host_set() -> impl Strategy<Value = BTreeSet<String>> {
    let prefix = prop::sample::select(vec!["n", "cn", "gpu", "rack1-n", "x.y"]);
    prop::collection::vec(
        (
            prefix,
            0usize..4,
            prop::collection::btree_set(0u64..300, 1..40),
        ),
        1..4,
    )
    .prop_map(|groups| {
        let mut seen = BTreeSet::new();
        let mut out = BTreeSet::new();
        for (p, w, nums) in groups {
            // One width per prefix keeps the set unambiguous.
            if !seen.insert(p) {
                continue;
            }
            for n in nums {
                out.insert(format!("{p}{n:0w$}"));
            }
        }
        out
    })
}

/// Names sorted as Slurm sorts them.
fn slurm_sorted(set: &BTreeSet<String>) -> Vec<String> {
    let mut hl = Hostlist::new();
    for h in set {
        hl.push_host(h).unwrap();
    }
    hl.uniq();
    hl.expand()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn expand_of_compress_is_the_sorted_set(set in host_set()) {
        let names: Vec<&String> = set.iter().collect();
        let compressed = compress(&names).unwrap();
        let back = expand(&compressed).unwrap();
        let got: BTreeSet<String> = back.iter().cloned().collect();
        prop_assert_eq!(&got, &set);
        prop_assert_eq!(back.len(), set.len());
        prop_assert_eq!(back, slurm_sorted(&set));
    }

    #[test]
    fn compress_of_expand_round_trips(set in host_set()) {
        let names: Vec<&String> = set.iter().collect();
        let x = compress(&names).unwrap();
        prop_assert_eq!(compress(&expand(&x).unwrap()).unwrap(), x.clone());
        let hl: Hostlist = x.parse().unwrap();
        prop_assert_eq!(hl.to_string(), x);
        prop_assert_eq!(hl.len(), set.len());
        for h in &set {
            prop_assert!(hl.contains(h));
        }
    }

    #[test]
    fn natural_order_is_total(a in "[a-c0-9]{0,6}", b in "[a-c0-9]{0,6}") {
        let ab = natural_cmp(&a, &b);
        let ba = natural_cmp(&b, &a);
        prop_assert_eq!(ab, ba.reverse());
    }
}

#[test]
fn ranged_string_examples() {
    assert_eq!(compress(&["n1", "n2", "n3", "n5"]).unwrap(), "n[1-3,5]");
    let hl: Hostlist = "n[1-3],n5,login".parse().unwrap();
    // Display keeps the list order, like hostlist_ranged_string.
    assert_eq!(hl.to_string(), "n[1-3,5],login");
    assert_eq!(hl.len(), 5);
}

/// Found by fuzz_hostlist: re-parsing the 44,104-name list this compresses
/// to used to take seconds (the tokenizer rescanned to the end per name).
#[test]
fn long_bracketless_list_round_trips() {
    let s = "\0\x017_\n7\n[3][344-44444,44]1]*:\x13)";
    let mut hl = slurm_conf::Hostlist::parse(s).unwrap();
    hl.uniq();
    let again = slurm_conf::Hostlist::parse(&hl.to_string()).unwrap();
    assert_eq!(again.len(), hl.len());
    assert_eq!(again.to_string(), hl.to_string());
}
