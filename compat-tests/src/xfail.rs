//! Expected failures. A cell (scenario x client version x implementation) that
//! matches an entry is reported XFAIL when it fails, and XPASS -- a failure of
//! the run -- when it passes: remove the entry then, so the marks stay true.
//! Fields: implementation, scenario, client version ("*" matches all), reason.

pub struct XFail {
    pub imp: &'static str,
    pub scenario: &'static str,
    pub version: &'static str,
    pub reason: &'static str,
}

pub const XFAILS: &[XFail] = &[];

pub fn lookup(imp: &str, scenario: &str, version: &str) -> Option<&'static str> {
    XFAILS
        .iter()
        .find(|x| {
            (x.imp == "*" || x.imp == imp)
                && (x.scenario == "*" || x.scenario == scenario)
                && (x.version == "*" || x.version == version)
        })
        .map(|x| x.reason)
}
