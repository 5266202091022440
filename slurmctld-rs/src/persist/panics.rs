//! Panics of the state machine: a hook that keeps each one's message and
//! place, and a runner that turns one into that text.

thread_local! {
    /// The last panic on this thread, as the hook saw it (with its place).
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Installs (once) a panic hook that logs every panic with its place, and
/// keeps it for [`catch_panic`]; the previous hook still runs.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = payload_text(info.payload());
            let at = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_else(|| "an unknown place".into());
            let thread = std::thread::current();
            let text = format!("'{msg}' at {at}");
            tracing::error!(
                "panic in thread {}: {text}",
                thread.name().unwrap_or("(unnamed)")
            );
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
            prev(info);
        }));
    });
}

pub fn payload_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(not a string)".into()
    }
}

/// Runs `f`, turning a panic into its message and place.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_panic_hook();
    LAST_PANIC.with(|p| p.borrow_mut().take());
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| format!("'{}'", payload_text(payload.as_ref())))
    })
}
