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
    let failed = report.failed_cells();
    // A complete run also vouches for the README's matrix.
    let readme_err = compat_tests::readme::matrix(&report).and_then(|table| {
        let readme = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
        let update = std::env::var("COMPAT_UPDATE_README").is_ok_and(|v| v == "1");
        compat_tests::readme::check(&readme, &table, update).err()
    });
    if !failed.is_empty() || readme_err.is_some() {
        panic!(
            "{} compat cell(s) failed or unexpectedly passed (details in {}):\n  {}\n{}",
            failed.len(),
            opts.report.display(),
            failed.join("\n  "),
            readme_err.unwrap_or_default()
        );
    }
}
