//! `dbd_list_msg_t` as `slurmdbd_pack_list_msg` packs it: a list of one record type, then a
//! return code. The message type says what the items are (job starts, id answers, and the
//! `slurmdb_*_rec_t` lists of the queries).

use crate::codec::error::{named, PResult};
use crate::codec::{prim, BufMut};
use crate::pack::Wire;
use crate::ProtocolVersion;

/// `my_list` is `None` where the sender had no list (NO_VAL on the wire), which stock uses for
/// an error such as a result too large to pack; `return_code` then says why.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct DbdListMsg<T> {
    pub my_list: Option<Vec<T>>,
    pub return_code: u32,
}

// irregular: generic over the item type, which a `wire!` body cannot be.
impl<T: Wire> Wire for DbdListMsg<T> {
    fn parse<'a>(i: &'a [u8], v: ProtocolVersion) -> PResult<'a, Self> {
        let (i, my_list) = named(Option::<Vec<T>>::parse(i, v), "my_list")?;
        let (i, return_code) = named(prim::u32(i), "return_code")?;
        Ok((
            i,
            Self {
                my_list,
                return_code,
            },
        ))
    }

    fn put<B: BufMut>(&self, b: &mut B, v: ProtocolVersion) {
        self.my_list.put(b, v);
        b.put_u32(self.return_code);
    }
}
