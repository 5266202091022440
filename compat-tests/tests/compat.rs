//! The compat matrix: every scenario x client version x implementation.
//! One test, so that each cluster is brought up once and all scenarios share it.
//! See compat-tests/src/lib.rs for the COMPAT_* knobs, e.g.
//!   COMPAT_SCENARIO=sinfo COMPAT_VERSIONS=24.11 COMPAT_IMPLS=stock cargo test -p compat-tests -- --nocapture

use compat_tests::{check_prereqs, run_matrix, say, Options};

#[test]
fn compat_matrix() {
    let opts = Options::from_env().unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = check_prereqs(&opts) {
        panic!("compat prerequisites missing: {e}");
    }
    let report = run_matrix(&opts);
    let md = report.markdown();
    if let Some(dir) = opts.report.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&opts.report, &md)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", opts.report.display()));
    say(&md);
    say(&format!(
        "compat report written to {}",
        opts.report.display()
    ));
    // A complete run also vouches for the README's matrix.
    if let Some(table) = compat_tests::readme::matrix(&report) {
        let readme = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
        let update = std::env::var("COMPAT_UPDATE_README").is_ok_and(|v| v == "1");
        if let Err(e) = compat_tests::readme::check(&readme, &table, update) {
            panic!("{e}");
        }
    }
    let n = report.failures();
    assert_eq!(
        n,
        0,
        "{n} compat cell(s) failed or unexpectedly passed; see {}",
        opts.report.display()
    );
}
