// Prototype of the single-pass `wire!` macro_rules (no tt-muncher) for docs/dev/CODEC-PLAN.md.
// Stand-alone: `rustc --edition 2021 codec-macro-proto.rs && ./codec-macro-proto`. PResult stands in for
// nom::IResult<&[u8], T, WireError>; the real one uses codec::prim and BufMut.
#![allow(dead_code)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct V(u16);
impl V { pub const V23_02: V = V(0x27); pub const V24_11: V = V(0x2a); pub const V25_11: V = V(0x2c); }
#[derive(Debug)] pub struct E { pub remaining: usize, pub path: Vec<&'static str>, pub what: &'static str }
pub type PResult<'a, T> = Result<(&'a [u8], T), E>;   // stands in for nom::IResult<&[u8], T, WireError>
pub trait Wire: Sized { fn parse<'a>(i: &'a [u8], v: V) -> PResult<'a, Self>; fn put(&self, b: &mut Vec<u8>, v: V); }
impl Wire for u32 {
    fn parse<'a>(i: &'a [u8], _: V) -> PResult<'a, Self> {
        match i.split_first_chunk::<4>() { Some((a, r)) => Ok((r, u32::from_be_bytes(*a))), None => Err(E{remaining: i.len(), path: vec![], what: "truncated"}) }
    }
    fn put(&self, b: &mut Vec<u8>, _: V) { b.extend_from_slice(&self.to_be_bytes()) }
}
pub fn named<'a, T>(r: PResult<'a, T>, f: &'static str) -> PResult<'a, T> { r.map_err(|mut e| { e.path.push(f); e }) }
macro_rules! gate {
    ($v:expr;) => { true };
    ($v:expr; $lo:ident ..) => { $v >= V::$lo };
    ($v:expr; .. $hi:ident) => { $v < V::$hi };
    ($v:expr; $lo:ident .. $hi:ident) => { $v >= V::$lo && $v < V::$hi };
}
// One step per entry, no recursion over the entry list.
macro_rules! step {
    (dec $i:ident $v:ident $s:ident; [$($g:tt)*] {} @let $l:ident ($($e:tt)*)) => {
        if gate!($v; $($g)*) { let (r, x) = named(Wire::parse($i, $v), stringify!($l))?; $l = x; $i = r; }
    };
    (enc $b:ident $v:ident $s:ident; [$($g:tt)*] {} @let $l:ident ($($e:tt)*)) => {
        if gate!($v; $($g)*) { let f: fn(&Self) -> _ = $($e)*; Wire::put(&f($s), $b, $v); }
    };
    (dec $i:ident $v:ident $s:ident; [$($g:tt)*] {len = $n:ident} $f:ident) => {
        if gate!($v; $($g)*) { let mut out = Vec::with_capacity(($n as usize).min($i.len() / 4)); for _ in 0..$n { let (r, x) = named(Wire::parse($i, $v), stringify!($f))?; out.push(x); $i = r; } $s.$f = out; }
    };
    (enc $b:ident $v:ident $s:ident; [$($g:tt)*] {len = $n:ident} $f:ident) => {
        if gate!($v; $($g)*) { for x in &$s.$f { Wire::put(x, $b, $v); } }
    };
    // plain field
    (dec $i:ident $v:ident $s:ident; [$($g:tt)*] {} $f:ident) => {
        if gate!($v; $($g)*) { let (r, x) = named(Wire::parse($i, $v), stringify!($f))?; $s.$f = x; $i = r; }
    };
    (enc $b:ident $v:ident $s:ident; [$($g:tt)*] {} $f:ident) => {
        if gate!($v; $($g)*) { Wire::put(&$s.$f, $b, $v); }
    };
    // field-local codec
    (dec $i:ident $v:ident $s:ident; [$($g:tt)*] {with = $m:path} $f:ident) => {
        if gate!($v; $($g)*) { use $m as m; let r = named(m::parse($i, $v, &mut $s.$f), stringify!($f))?; $i = r.0; }
    };
    (enc $b:ident $v:ident $s:ident; [$($g:tt)*] {with = $m:path} $f:ident) => {
        if gate!($v; $($g)*) { use $m as m; m::put($b, $v, &$s.$f); }
    };
    // data-dependent presence
    (dec $i:ident $v:ident $s:ident; [$($g:tt)*] {if = $c:expr} $f:ident) => {
        if gate!($v; $($g)*) && { let c: fn(&Self) -> bool = $c; c(&$s) } { let (r, x) = named(Wire::parse($i, $v), stringify!($f))?; $s.$f = x; $i = r; }
    };
    (enc $b:ident $v:ident $s:ident; [$($g:tt)*] {if = $c:expr} $f:ident) => {
        if gate!($v; $($g)*) && { let c: fn(&Self) -> bool = $c; c($s) } { Wire::put(&$s.$f, $b, $v); }
    };
}
macro_rules! wire {
    ($(#[$sm:meta])* pub struct $name:ident {
        $( $(#[doc = $doc:literal])* $(#[wire($($w:tt)*)])? $([$($g:tt)*])? $(let $l:ident : $lt:ty = ($($le:tt)*))? $(pub $f:ident : $ty:ty)? $(=> $p:ident)? , )*
    }) => {
        $(#[$sm])*
        #[derive(Default, Debug, Clone, PartialEq)]
        pub struct $name { $( $(#[doc = $doc])* $( pub $f : $ty, )? )* }
        impl Wire for $name {
            #[allow(unused_mut)]
            fn parse<'a>(mut i: &'a [u8], v: V) -> PResult<'a, Self> {
                let mut s = Self::default();
                $( $(let mut $l: $lt = Default::default();)? )* $( step!(dec i v s; [$($($g)*)?] {$($($w)*)?} $($f)? $($p)? $(@let $l ($($le)*))?); )*
                Ok((i, s))
            }
            fn put(&self, b: &mut Vec<u8>, v: V) {
                let s = self;
                $( step!(enc b v s; [$($($g)*)?] {$($($w)*)?} $($f)? $($p)? $(@let $l ($($le)*))?); )*
            }
        }
    };
}
#[derive(Default, Debug, Clone, Copy, PartialEq)] pub struct StepId { pub job_id: u32, pub step_id: u32 }
impl Wire for StepId {
    fn parse<'a>(i: &'a [u8], v: V) -> PResult<'a, Self> { let (i, job_id) = named(u32::parse(i, v), "job_id")?; let (i, step_id) = u32::parse(i, v)?; Ok((i, StepId{job_id, step_id})) }
    fn put(&self, b: &mut Vec<u8>, v: V) { self.job_id.put(b, v); self.step_id.put(b, v) }
}
/// Before 25.11 only the job id travels where 25.11 sends the whole step id.
mod job_id32 {
    use super::*;
    pub fn parse<'a>(i: &'a [u8], v: V, f: &mut StepId) -> PResult<'a, ()> { let (i, j) = u32::parse(i, v)?; f.job_id = j; f.step_id = 0xffff_fffe; Ok((i, ())) }
    pub fn put(b: &mut Vec<u8>, v: V, f: &StepId) { f.job_id.put(b, v) }
}
wire! {
    /// `job_alloc_info_msg_t`-like.
    pub struct JobAllocInfoMsg {
        /// The whole step id from 25.11.
        [V25_11..] pub step_id: StepId,
        pub flags: u32,
        #[wire(with = job_id32)] [..V25_11] => step_id,
        /// Only when flags says so.
        #[wire(if = |s| s.flags != 0)] [V23_02..] pub extra: u32,
    }
}
wire! {
    /// count first, then another field, then the records.
    pub struct ListMsg {
        let n: u32 = (|s| s.items.len() as u32),
        pub last_update: u32,
        #[wire(len = n)] pub items: Vec<u32>,
    }
}
fn main() {
    let l = ListMsg { last_update: 5, items: vec![1,2] };
    let mut b = Vec::new(); l.put(&mut b, V::V25_11); println!("{b:?} {:?}", ListMsg::parse(&b, V::V25_11).unwrap().1);
    let m = JobAllocInfoMsg { step_id: StepId { job_id: 7, step_id: 3 }, flags: 1, extra: 9 };
    for v in [V::V23_02, V::V24_11, V::V25_11] {
        let mut b = Vec::new(); m.put(&mut b, v);
        let (rest, back) = JobAllocInfoMsg::parse(&b, v).unwrap();
        println!("{v:?} {b:?} rest={} {back:?}", rest.len());
        println!("  truncated: {:?}", JobAllocInfoMsg::parse(&b[..b.len()-2], v).unwrap_err());
    }
}
