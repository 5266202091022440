//! sacctmgr's messages and the controller's start-up reads (clusters, accounts, users,
//! coordinators, associations, wckeys, resources, stats, problems, config, txn) against layouts
//! written out field by field from `slurmdb_pack.c` / `slurmdbd_pack.c` of every release branch
//! (`_pack_cond_msg`, `_pack_modify_msg`, `_pack_acct_coord_msg`, `slurmdbd_pack_list_msg`), not
//! from our encoder.

use super::acct_tests::{check, frame};
use super::query_tests::{
    assoc_body, assoc_value, cluster_body, cluster_value, list, s, strlist, INF,
};
use super::tests::{be16, be32, be64, packstr};
use super::*;
use crate::msg::common::Empty;
use crate::msg::slurmdb::*;
use crate::pack::NO_VAL;
use crate::{DecodeErrorKind, ProtocolVersion as V};

/// `slurmdbd_pack_list_msg` of one item written by `item`, return code 0.
fn one(item: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = Vec::new();
    be32(&mut b, 1);
    item(&mut b);
    be32(&mut b, 0);
    b
}

fn listed<T>(x: T) -> DbdListMsg<T> {
    DbdListMsg {
        my_list: Some(vec![x]),
        return_code: 0,
    }
}

/// An association cond selecting alice's associations under `research`, deleted ones too.
fn assoc_cond_body(b: &mut Vec<u8>, v: V) {
    let new = v >= V::V24_11;
    if new {
        b.push(1); // packbool: a cond follows
    }
    strlist(b, &["research"]); // acct_list
    be32(b, NO_VAL); // cluster_list
    be32(b, NO_VAL); // def_qos_id_list
    if new {
        be32(b, 0x1 | 0x4); // flags: ASSOC_COND_FLAG_WITH_DELETED | ONLY_DEFS
    }
    be32(b, NO_VAL); // format_list
    be32(b, NO_VAL); // id_list
    if !new {
        be16(b, 1); // only_defs
    }
    be32(b, NO_VAL); // partition_list
    be32(b, NO_VAL); // parent_acct_list
    be32(b, NO_VAL); // qos_list
    be64(b, 0); // usage_end
    be64(b, 1_700_000_000); // usage_start
    strlist(b, &["alice"]); // user_list
    if !new {
        be16(b, 0); // with_usage
        be16(b, 1); // with_deleted
        be16(b, 0); // with_raw_qos
        be16(b, 0); // with_sub_accts
        be16(b, 0); // without_parent_info
        be16(b, 0); // without_parent_limits
    }
}

fn assoc_cond_value(v: V) -> OptAssocCond {
    let new = v >= V::V24_11;
    OptAssocCond {
        cond: Some(SlurmdbAssocCond {
            acct_list: list(&["research"]),
            flags: if new { 0x5 } else { 0 },
            only_defs: u16::from(!new),
            usage_start: 1_700_000_000,
            user_list: list(&["alice"]),
            with_deleted: u16::from(!new),
            ..Default::default()
        }),
    }
}

#[test]
fn assoc_cond_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        assoc_cond_body(&mut b, v);
        let c = assoc_cond_value(v);
        check(v, 1410, &b, &DbdMessage::GetAssocs(c.clone()));
        check(v, 1468, &b, &DbdMessage::GetProbs(c.clone()));
        check(v, 1437, &b, &DbdMessage::RemoveAssocs(c));
    }
    // A NULL cond: the flag alone from 24.11, an empty cond before.
    let null = DbdMessage::GetAssocs(OptAssocCond { cond: None });
    check(V::V24_11, 1410, &[0], &null);
    let mut b = Vec::new();
    for _ in 0..5 {
        be32(&mut b, NO_VAL);
    }
    be16(&mut b, 0);
    for _ in 0..3 {
        be32(&mut b, NO_VAL);
    }
    be64(&mut b, 0);
    be64(&mut b, 0);
    be32(&mut b, NO_VAL);
    for _ in 0..6 {
        be16(&mut b, 0);
    }
    assert_eq!(null.encode(V::V23_11).unwrap(), frame(1410, &b));
}

#[test]
fn got_assocs_and_problems_carry_assoc_records() {
    for v in V::ALL {
        let b = one(|b| assoc_body(b, v));
        check(v, 1417, &b, &DbdMessage::GotAssocs(listed(assoc_value(v))));
        check(v, 1469, &b, &DbdMessage::GotProbs(listed(assoc_value(v))));
        check(v, 1404, &b, &DbdMessage::AddAssocs(listed(assoc_value(v))));
    }
}

#[test]
fn modify_assocs_is_a_cond_then_a_record() {
    for v in V::ALL {
        let mut b = Vec::new();
        assoc_cond_body(&mut b, v);
        assoc_body(&mut b, v);
        let m = DbdModifyMsg {
            cond: assoc_cond_value(v),
            rec: assoc_value(v),
        };
        check(v, 1429, &b, &DbdMessage::ModifyAssocs(Box::new(m)));
    }
}

fn cluster_cond_body(b: &mut Vec<u8>, v: V) {
    be16(b, 0); // classification
    strlist(b, &["c1"]); // cluster_list
    be32(b, NO_VAL); // federation_list
    be32(b, 0); // flags
    be32(b, NO_VAL); // format_list
    if v < V::V23_11 {
        be32(b, NO_VAL); // plugin_id_select_list
    }
    be32(b, NO_VAL); // rpc_version_list
    be64(b, 1_700_086_400); // usage_end
    be64(b, 1_700_000_000); // usage_start
    be16(b, 1); // with_usage
    be16(b, 0); // with_deleted
}

fn cluster_cond_value() -> SlurmdbClusterCond {
    SlurmdbClusterCond {
        cluster_list: list(&["c1"]),
        usage_end: 1_700_086_400,
        usage_start: 1_700_000_000,
        with_usage: 1,
        ..Default::default()
    }
}

#[test]
fn clusters_per_release() {
    let mut sizes = Vec::new();
    for v in V::ALL {
        let mut b = Vec::new();
        cluster_cond_body(&mut b, v);
        sizes.push(b.len());
        check(v, 1412, &b, &DbdMessage::GetClusters(cluster_cond_value()));
        check(
            v,
            1438,
            &b,
            &DbdMessage::RemoveClusters(cluster_cond_value()),
        );

        let b = one(|b| cluster_body(b, v));
        let rec = OptClusterRec {
            rec: Some(cluster_value(v)),
        };
        check(v, 1419, &b, &DbdMessage::GotClusters(listed(rec.clone())));
        check(v, 1405, &b, &DbdMessage::AddClusters(listed(rec.clone())));

        let mut b = Vec::new();
        cluster_cond_body(&mut b, v);
        cluster_body(&mut b, v);
        let m = DbdModifyMsg {
            cond: cluster_cond_value(),
            rec,
        };
        check(v, 1430, &b, &DbdMessage::ModifyClusters(Box::new(m)));
    }
    // 23.11 dropped plugin_id_select_list, nothing else changed.
    assert_eq!(sizes[2] + 4, sizes[0]);
    assert!(sizes[2..].iter().all(|&n| n == sizes[2]));
}

fn coord_body(b: &mut Vec<u8>, name: &str, direct: u16) {
    packstr(b, name);
    be16(b, direct);
}

fn coord(name: &str, direct: u16) -> SlurmdbCoordRec {
    SlurmdbCoordRec {
        name: s(name),
        direct,
    }
}

fn account_body(b: &mut Vec<u8>, v: V) {
    be32(b, 1); // assoc_list: one association
    assoc_body(b, v);
    be32(b, 1); // coordinators
    coord_body(b, "alice", 1);
    packstr(b, "Research group"); // description
    be32(b, 0); // flags
    packstr(b, "research"); // name
    packstr(b, "science"); // organization
}

fn account_value(v: V) -> SlurmdbAccountRec {
    SlurmdbAccountRec {
        assoc_list: Some(vec![assoc_value(v)]),
        coordinators: Some(vec![coord("alice", 1)]),
        description: s("Research group"),
        flags: 0,
        name: s("research"),
        organization: s("science"),
    }
}

fn account_cond_body(b: &mut Vec<u8>, v: V) {
    assoc_cond_body(b, v); // assoc_cond
    be32(b, NO_VAL); // description_list
    if v >= V::V24_05 {
        be32(b, 0x2 | 0x4); // flags: SLURMDB_ACCT_FLAG_WASSOC | WCOORD
    }
    strlist(b, &["science"]); // organization_list
    if v < V::V24_05 {
        be16(b, 1); // with_assocs
        be16(b, 1); // with_coords
        be16(b, 0); // with_deleted
    }
}

fn account_cond_value(v: V) -> SlurmdbAccountCond {
    let new = v >= V::V24_05;
    SlurmdbAccountCond {
        assoc_cond: assoc_cond_value(v),
        flags: if new { 0x6 } else { 0 },
        organization_list: list(&["science"]),
        with_assocs: u16::from(!new),
        with_coords: u16::from(!new),
        ..Default::default()
    }
}

#[test]
fn accounts_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        account_cond_body(&mut b, v);
        check(v, 1409, &b, &DbdMessage::GetAccounts(account_cond_value(v)));
        check(
            v,
            1435,
            &b,
            &DbdMessage::RemoveAccounts(account_cond_value(v)),
        );

        let b = one(|b| account_body(b, v));
        check(
            v,
            1416,
            &b,
            &DbdMessage::GotAccounts(listed(account_value(v))),
        );
        check(
            v,
            1402,
            &b,
            &DbdMessage::AddAccounts(listed(account_value(v))),
        );

        let mut b = Vec::new();
        account_cond_body(&mut b, v);
        account_body(&mut b, v);
        let m = DbdModifyMsg {
            cond: account_cond_value(v),
            rec: account_value(v),
        };
        check(v, 1428, &b, &DbdMessage::ModifyAccounts(Box::new(m)));
    }
}

fn wckey_body(b: &mut Vec<u8>) {
    be32(b, NO_VAL); // accounting_list
    packstr(b, "c1"); // cluster
    be32(b, 0); // flags
    be32(b, 4); // id
    be16(b, 1); // is_def
    packstr(b, "*"); // name
    be32(b, 1000); // uid
    packstr(b, "alice"); // user
}

fn wckey_value() -> SlurmdbWckeyRec {
    SlurmdbWckeyRec {
        cluster: s("c1"),
        id: 4,
        is_def: 1,
        name: s("*"),
        uid: 1000,
        user: s("alice"),
        ..Default::default()
    }
}

fn user_body(b: &mut Vec<u8>, v: V) {
    let new = v >= V::V25_11;
    if new {
        b.push(1); // packbool: a record follows
    }
    be16(b, 3); // admin_level: SLURMDB_ADMIN_SUPER_USER
    be32(b, 1); // assoc_list
    assoc_body(b, v);
    be32(b, 1); // coord_accts
    coord_body(b, "research", 1);
    if new {
        be32(b, 2); // def_qos_id
    }
    packstr(b, "research"); // default_acct
    be32(b, 0); // default_wckey: NULL
    be32(b, 0); // flags
    packstr(b, "alice"); // name
    be32(b, 0); // old_name: NULL
    be32(b, 1000); // uid
    be32(b, 1); // wckey_list
    wckey_body(b);
}

fn user_value(v: V) -> OptUserRec {
    OptUserRec {
        rec: Some(SlurmdbUserRec {
            admin_level: 3,
            assoc_list: Some(vec![assoc_value(v)]),
            coord_accts: Some(vec![coord("research", 1)]),
            def_qos_id: if v >= V::V25_11 { 2 } else { 0 },
            default_acct: s("research"),
            name: s("alice"),
            uid: 1000,
            wckey_list: Some(vec![wckey_value()]),
            ..Default::default()
        }),
    }
}

fn user_cond_body(b: &mut Vec<u8>, v: V) {
    be16(b, 0); // admin_level
    assoc_cond_body(b, v); // assoc_cond
    strlist(b, &["research"]); // def_acct_list
    be32(b, NO_VAL); // def_wckey_list
    be16(b, 1); // with_assocs
    be16(b, 1); // with_coords
    be16(b, 0); // with_deleted
    be16(b, 0); // with_wckeys
}

fn user_cond_value(v: V) -> SlurmdbUserCond {
    SlurmdbUserCond {
        assoc_cond: assoc_cond_value(v),
        def_acct_list: list(&["research"]),
        with_assocs: 1,
        with_coords: 1,
        ..Default::default()
    }
}

#[test]
fn users_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        user_cond_body(&mut b, v);
        check(v, 1415, &b, &DbdMessage::GetUsers(user_cond_value(v)));
        check(v, 1439, &b, &DbdMessage::RemoveUsers(user_cond_value(v)));

        let b = one(|b| user_body(b, v));
        check(v, 1423, &b, &DbdMessage::GotUsers(listed(user_value(v))));
        check(v, 1406, &b, &DbdMessage::AddUsers(listed(user_value(v))));

        let mut b = Vec::new();
        user_cond_body(&mut b, v);
        user_body(&mut b, v);
        let m = DbdModifyMsg {
            cond: user_cond_value(v),
            rec: user_value(v),
        };
        check(v, 1431, &b, &DbdMessage::ModifyUsers(Box::new(m)));
    }
    // A NULL user: the flag alone from 25.11; an empty record before, which decodes as one.
    let null = DbdMessage::GotUsers(listed(OptUserRec { rec: None }));
    check(V::V25_11, 1423, &[0, 0, 0, 1, 0, 0, 0, 0, 0], &null);
    let mut b = Vec::new();
    be32(&mut b, 1);
    be16(&mut b, 0); // admin_level
    be32(&mut b, NO_VAL); // assoc_list
    be32(&mut b, NO_VAL); // coord_accts
    be32(&mut b, 0); // default_acct
    be32(&mut b, 0); // default_wckey
    be32(&mut b, 0); // flags
    be32(&mut b, 0); // name
    be32(&mut b, 0); // old_name
    be32(&mut b, 0); // uid
    be32(&mut b, NO_VAL); // wckey_list
    be32(&mut b, 0);
    assert_eq!(null.encode(V::V25_05).unwrap(), frame(1423, &b));
}

#[test]
fn coordinators_are_accounts_then_a_user_cond() {
    for v in V::ALL {
        let mut b = Vec::new();
        strlist(&mut b, &["research", "physics"]); // acct_list: a plain count
        user_cond_body(&mut b, v);
        let m = DbdAcctCoordMsg {
            acct_list: vec![s("research"), s("physics")],
            cond: user_cond_value(v),
        };
        check(v, 1403, &b, &DbdMessage::AddAccountCoords(m.clone()));
        check(v, 1436, &b, &DbdMessage::RemoveAccountCoords(m));
    }
    // No accounts is a count of 0, never NO_VAL.
    let v = V::V24_11;
    let mut b = Vec::new();
    be32(&mut b, NO_VAL);
    user_cond_body(&mut b, v);
    let e = DbdMessage::decode_framed(v, &frame(1403, &b)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::CountTooLarge { count, .. } if count == u64::from(NO_VAL)),
        "{e}"
    );
    assert_eq!(e.path(), "DBD_ADD_ACCOUNT_COORDS.acct_list");
}

fn add_assoc_cond_body(b: &mut Vec<u8>, v: V) {
    strlist(b, &["research"]); // acct_list
    assoc_body(b, v); // assoc: the limits shared by the new associations
    strlist(b, &["c1"]); // cluster_list
    be32(b, NO_VAL); // partition_list
    strlist(b, &["alice", "bob"]); // user_list
    be32(b, NO_VAL); // wckey_list
}

fn add_assoc_cond_value(v: V) -> SlurmdbAddAssocCond {
    SlurmdbAddAssocCond {
        acct_list: list(&["research"]),
        assoc: assoc_value(v),
        cluster_list: list(&["c1"]),
        user_list: list(&["alice", "bob"]),
        ..Default::default()
    }
}

#[test]
fn add_accounts_and_users_cond_exist_from_23_11() {
    for v in V::ALL {
        let m = DbdMessage::AddUsersCond(Box::new(DbdModifyMsg {
            cond: add_assoc_cond_value(v),
            rec: user_value(v),
        }));
        let a = DbdMessage::AddAccountsCond(Box::new(DbdModifyMsg {
            cond: add_assoc_cond_value(v),
            rec: account_value(v),
        }));
        if v < V::V23_11 {
            assert!(matches!(m.encode(v), Err(EncodeError::NotInRelease(..))));
            assert!(matches!(a.encode(v), Err(EncodeError::NotInRelease(..))));
            continue;
        }
        let mut b = Vec::new();
        add_assoc_cond_body(&mut b, v);
        user_body(&mut b, v);
        check(v, 1502, &b, &m);
        let mut b = Vec::new();
        add_assoc_cond_body(&mut b, v);
        account_body(&mut b, v);
        check(v, 1501, &b, &a);
    }
}

#[test]
fn wckeys_are_the_same_everywhere() {
    for v in V::ALL {
        let mut b = Vec::new();
        strlist(&mut b, &["c1"]); // cluster_list
        be32(&mut b, NO_VAL); // format_list
        be32(&mut b, NO_VAL); // id_list
        be32(&mut b, NO_VAL); // name_list
        be16(&mut b, 0); // only_defs
        be64(&mut b, 0); // usage_end
        be64(&mut b, 0); // usage_start
        be32(&mut b, NO_VAL); // user_list
        be16(&mut b, 0); // with_usage
        be16(&mut b, 1); // with_deleted
        let c = SlurmdbWckeyCond {
            cluster_list: list(&["c1"]),
            with_deleted: 1,
            ..Default::default()
        };
        check(v, 1453, &b, &DbdMessage::GetWckeys(c.clone()));
        check(v, 1455, &b, &DbdMessage::RemoveWckeys(c));
        let b = one(wckey_body);
        check(v, 1454, &b, &DbdMessage::GotWckeys(listed(wckey_value())));
        check(v, 1452, &b, &DbdMessage::AddWckeys(listed(wckey_value())));
    }
}

fn res_body(b: &mut Vec<u8>, v: V) {
    let new = v >= V::V23_02;
    be32(b, 1); // clus_res_list
    packstr(b, "c1"); // .cluster
    if new {
        be32(b, 8); // .allowed
    } else {
        be16(b, 50); // .percent_allowed
    }
    be32(b, NO_VAL); // clus_res_rec: none
    be32(b, 16); // count
    be32(b, 0); // description: NULL
    be32(b, 0); // flags
    be32(b, 1); // id
    be32(b, 0); // manager: NULL
    packstr(b, "matlab"); // name
    if new {
        be32(b, 8); // allocated
        be32(b, 2); // last_consumed
    } else {
        be16(b, 50); // percent_used
    }
    packstr(b, "flex"); // server
    be32(b, 1); // type: SLURMDB_RESOURCE_LICENSE
    if new {
        be64(b, 1_700_000_000); // last_update
    }
}

fn res_value(v: V) -> SlurmdbResRec {
    let new = v >= V::V23_02;
    SlurmdbResRec {
        clus_res_list: Some(vec![SlurmdbClusResRec {
            cluster: s("c1"),
            allowed: if new { 8 } else { 50 },
        }]),
        clus_res_rec: None,
        count: 16,
        name: s("matlab"),
        id: 1,
        allocated: if new { 8 } else { 50 },
        last_consumed: if new { 2 } else { 0 },
        server: s("flex"),
        r#type: 1,
        last_update: if new { 1_700_000_000 } else { 0 },
        ..Default::default()
    }
}

#[test]
fn resources_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        strlist(&mut b, &["c1"]); // cluster_list
        be32(&mut b, NO_VAL); // description_list
        be32(&mut b, 0x1000_0000); // flags: SLURMDB_RES_FLAG_NOTSET
        for _ in 0..7 {
            // format, id, manager, name, allowed, server, type lists
            be32(&mut b, NO_VAL);
        }
        be16(&mut b, 0); // with_deleted
        be16(&mut b, 1); // with_clusters
        let c = SlurmdbResCond {
            cluster_list: list(&["c1"]),
            flags: 0x1000_0000,
            with_clusters: 1,
            ..Default::default()
        };
        check(v, 1478, &b, &DbdMessage::GetRes(c.clone()));
        check(v, 1480, &b, &DbdMessage::RemoveRes(c));

        let b = one(|b| res_body(b, v));
        check(v, 1479, &b, &DbdMessage::GotRes(listed(res_value(v))));
        check(v, 1477, &b, &DbdMessage::AddRes(listed(res_value(v))));
    }
    // The record for one cluster follows a 0 word; any other word but NO_VAL is refused.
    let v = V::V24_11;
    let mut b = Vec::new();
    be32(&mut b, 1);
    be32(&mut b, NO_VAL); // clus_res_list
    let at = b.len();
    be32(&mut b, 0); // clus_res_rec: present
    packstr(&mut b, "c1");
    be32(&mut b, 3);
    let tail = |b: &mut Vec<u8>| {
        for x in [16, 0, 0, 1, 0, 0, 0, 0, 0, 1] {
            be32(b, x); // count .. type
        }
        be64(b, 0); // last_update
        be32(b, 0); // return_code
    };
    tail(&mut b);
    let m = DbdMessage::decode_framed(v, &frame(1479, &b)).unwrap();
    let DbdMessage::GotRes(l) = &m else {
        panic!("{m:?}")
    };
    let r = &l.my_list.as_ref().unwrap()[0];
    assert_eq!(r.clus_res_rec.as_ref().unwrap().allowed, 3);
    assert_eq!(m.encode(v).unwrap(), frame(1479, &b));
    b[at + 3] = 7;
    let e = DbdMessage::decode_framed(v, &frame(1479, &b)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::BadValue { value: 7, .. }),
        "{e}"
    );
    assert_eq!(e.offset, at, "{e}");
}

/// The QOS `sacctmgr add qos low priority=1` makes (`slurmdb_pack_qos_rec`).
fn qos_rec_body(b: &mut Vec<u8>) {
    packstr(b, "low"); // description
    be32(b, 2); // id
    for _ in 0..2 {
        be32(b, 0); // flags, grace_time
    }
    for _ in 0..3 {
        be32(b, 0); // grp_tres*: NULL
    }
    for _ in 0..4 {
        be32(b, INF); // grp_jobs .. grp_wall
    }
    for _ in 0..7 {
        be32(b, 0); // max_tres_*: NULL
    }
    for _ in 0..8 {
        be32(b, INF); // max_jobs_pa .. max_wall_pj
    }
    be32(b, 0); // min_tres_pj: NULL
    packstr(b, "low"); // name
    be32(b, NO_VAL); // preempt_bitstr
    be32(b, NO_VAL); // preempt_list
    be16(b, 0); // preempt_mode
    be32(b, NO_VAL); // preempt_exempt_time
    be32(b, 1); // priority
    for x in [1.0, -1.0, -1.0] {
        be64(b, crate::types::Double::from_value(x).scaled_bits);
    }
}

fn qos_rec_value() -> SlurmdbQosRec {
    SlurmdbQosRec {
        description: s("low"),
        id: 2,
        grp_jobs: INF,
        grp_jobs_accrue: INF,
        grp_submit_jobs: INF,
        grp_wall: INF,
        max_jobs_pa: INF,
        max_jobs_pu: INF,
        max_jobs_accrue_pa: INF,
        max_jobs_accrue_pu: INF,
        min_prio_thresh: INF,
        max_submit_jobs_pa: INF,
        max_submit_jobs_pu: INF,
        max_wall_pj: INF,
        name: s("low"),
        preempt_exempt_time: NO_VAL,
        priority: 1,
        usage_factor: crate::types::Double::from_value(1.0),
        usage_thres: crate::types::Double::from_value(-1.0),
        limit_factor: crate::types::Double::from_value(-1.0),
        ..Default::default()
    }
}

#[test]
fn qos_and_tres_changes() {
    for v in V::ALL {
        // REMOVE_QOS takes GET_QOS's cond, MODIFY_QOS that cond and a record.
        let mut cond = Vec::new();
        if v >= V::V24_11 {
            cond.push(0); // packbool: NULL cond
        } else {
            for _ in 0..4 {
                be32(&mut cond, NO_VAL);
            }
            be16(&mut cond, 0);
            be16(&mut cond, 0);
        }
        let null = DbdQosCondMsg {
            cond: (v < V::V24_11).then(SlurmdbQosCond::default),
        };
        check(v, 1450, &cond, &DbdMessage::RemoveQos(null.clone()));

        let mut rec = Vec::new();
        qos_rec_body(&mut rec);
        let q = qos_rec_value();
        let mut b = cond.clone();
        b.extend_from_slice(&rec);
        let m = DbdModifyMsg {
            cond: null,
            rec: q.clone(),
        };
        check(v, 1451, &b, &DbdMessage::ModifyQos(Box::new(m)));
        let b = one(|b| b.extend_from_slice(&rec));
        check(v, 1447, &b, &DbdMessage::AddQos(listed(q)));

        let b = one(|b| {
            be64(b, 0); // alloc_secs
            be64(b, 0); // count
            be32(b, 0); // id: assigned by the dbd
            packstr(b, "gpu"); // name
            packstr(b, "gres"); // type
        });
        let t = SlurmdbTresRec {
            name: s("gpu"),
            r#type: s("gres"),
            ..Default::default()
        };
        check(v, 1485, &b, &DbdMessage::AddTres(listed(t)));
    }
}

#[test]
fn got_list_is_the_names_changed() {
    for v in V::ALL {
        let mut b = Vec::new();
        strlist(&mut b, &[" C = c1 A = research U = alice"]);
        be32(&mut b, 0);
        let m = DbdListMsg {
            my_list: Some(vec![s(" C = c1 A = research U = alice")]),
            return_code: 0,
        };
        check(v, 1422, &b, &DbdMessage::GotList(m));
    }
    // Nothing matched: no list, and the return code says why.
    let mut b = Vec::new();
    be32(&mut b, NO_VAL);
    be32(&mut b, 2006);
    let m = DbdListMsg {
        my_list: None,
        return_code: 2006,
    };
    check(V::V22_05, 1422, &b, &DbdMessage::GotList(m));
}

fn rollup_body(b: &mut Vec<u8>, cluster: Option<&str>, base: u64) {
    match cluster {
        Some(c) => packstr(b, c),
        None => be32(b, 0),
    }
    be16(b, 3); // DBD_ROLLUP_COUNT
    for k in 0..3u64 {
        be16(b, k as u16 + 1); // count
        be64(b, 1_700_000_000 + k); // timestamp
        be64(b, base + k); // time_last
        be64(b, base + 10 + k); // time_max
        be64(b, base + 20 + k); // time_total
    }
}

fn rollup_value(cluster: Option<&str>, base: u64) -> SlurmdbRollupStats {
    SlurmdbRollupStats {
        cluster_name: cluster.map(Into::into),
        periods: (0..3u64)
            .map(|k| SlurmdbRollupPeriod {
                count: k as u16 + 1,
                timestamp: 1_700_000_000 + k as i64,
                time_last: base + k,
                time_max: base + 10 + k,
                time_total: base + 20 + k,
            })
            .collect(),
    }
}

#[test]
fn stats_are_the_same_everywhere() {
    for v in V::ALL {
        check(v, 1489, &[], &DbdMessage::GetStats(Empty {}));
        check(v, 1491, &[], &DbdMessage::ClearStats(Empty {}));
        let mut b = Vec::new();
        rollup_body(&mut b, None, 100); // dbd_rollup_stats
        be32(&mut b, 1); // rollup_stats
        rollup_body(&mut b, Some("c1"), 200);
        be32(&mut b, 2); // rpc_list
        for (cnt, id, time) in [(5, 1410, 900), (1, 1489, 40)] {
            be32(&mut b, cnt);
            be32(&mut b, id);
            be64(&mut b, time);
        }
        be64(&mut b, 1_699_999_000); // time_start
        be32(&mut b, 1); // user_list
        be32(&mut b, 6); // cnt
        be32(&mut b, 0); // id: root
        be64(&mut b, 940); // time
        let rpc = |cnt, id, time| SlurmdbRpcObj { cnt, id, time };
        let m = SlurmdbStatsRec {
            dbd_rollup_stats: rollup_value(None, 100),
            rollup_stats: Some(vec![rollup_value(Some("c1"), 200)]),
            rpc_list: Some(vec![rpc(5, 1410, 900), rpc(1, 1489, 40)]),
            time_start: 1_699_999_000,
            user_list: Some(vec![rpc(6, 0, 940)]),
        };
        check(v, 1490, &b, &DbdMessage::GotStats(m));
    }
}

#[test]
fn config_changed_shape_in_26_05() {
    for v in V::ALL {
        let new = v >= V::V26_05;
        let mut b = Vec::new();
        if !new {
            packstr(&mut b, "slurmdbd.conf"); // the placeholder name
        }
        let m = DbdGetConfigMsg {
            config_name: (!new).then(|| "slurmdbd.conf".into()),
        };
        check(v, 1466, &b, &DbdMessage::GetConfig(m));

        let mut pairs = Vec::new();
        be32(&mut pairs, 1);
        packstr(&mut pairs, "DbdPort");
        packstr(&mut pairs, "6819");
        be32(&mut pairs, 0);
        let kp = DbdListMsg {
            my_list: Some(vec![ConfigKeyPair {
                name: s("DbdPort"),
                value: s("6819"),
            }]),
            return_code: 0,
        };
        if !new {
            let m = DbdGotConfigMsg {
                key_pairs: kp,
                ..Default::default()
            };
            check(v, 1467, &pairs, &DbdMessage::GotConfig(m));
            continue;
        }
        // 26.05: the pairs keep the old number under a new name; the structure gets 1508.
        check(v, 1467, &pairs, &DbdMessage::GotConfigKeypairs(kp));
        let mut b = Vec::new();
        packstr(&mut b, "/tmp"); // archive_dir
        be32(&mut b, 0); // archive_script
        be16(&mut b, 0); // commit_delay
        packstr(&mut b, "dbd"); // dbd_addr
        be32(&mut b, 0); // dbd_backup
        packstr(&mut b, "dbd"); // dbd_host
        be16(&mut b, 6819); // dbd_port
        be16(&mut b, 3); // debug_level
        be32(&mut b, 0); // default_qos
        be32(&mut b, 0); // flags
        packstr(&mut b, "/var/log/slurmdbd.log"); // log_file
        be32(&mut b, 50_000); // max_purge_limit
        be32(&mut b, INF); // max_time_range
        be32(&mut b, 0); // parameters
        be16(&mut b, 0); // persist_conn_rc_flags
        packstr(&mut b, "/run/slurmdbd.pid"); // pid_file
        for _ in 0..9 {
            be32(&mut b, NO_VAL); // purge_event .. purge_jobenv
        }
        for _ in 0..3 {
            packstr(&mut b, ""); // storage_loc, storage_pass_script, storage_user: never sent
        }
        be16(&mut b, 0); // syslog_debug
        be16(&mut b, 1); // track_wckey
        be16(&mut b, 0); // track_ctld
        let conf = SlurmdbdConf {
            archive_dir: s("/tmp"),
            dbd_addr: s("dbd"),
            dbd_host: s("dbd"),
            dbd_port: 6819,
            debug_level: 3,
            log_file: s("/var/log/slurmdbd.log"),
            max_purge_limit: 50_000,
            max_time_range: INF,
            pid_file: s("/run/slurmdbd.pid"),
            purge_event: NO_VAL,
            purge_job: NO_VAL,
            purge_resv: NO_VAL,
            purge_step: NO_VAL,
            purge_suspend: NO_VAL,
            purge_txn: NO_VAL,
            purge_usage: NO_VAL,
            purge_jobscript: NO_VAL,
            purge_jobenv: NO_VAL,
            storage_loc: s(""),
            storage_pass_script: s(""),
            storage_user: s(""),
            track_wckey: 1,
            ..Default::default()
        };
        let m = DbdGotConfigMsg {
            conf: Box::new(conf),
            ..Default::default()
        };
        check(v, 1508, &b, &DbdMessage::GotConfig(m));
    }
}

#[test]
fn txn_and_roll_usage_are_the_same_everywhere() {
    for v in V::ALL {
        let mut b = Vec::new();
        for _ in 0..3 {
            be32(&mut b, NO_VAL); // acct_list, action_list, actor_list
        }
        strlist(&mut b, &["c1"]); // cluster_list
        for _ in 0..4 {
            be32(&mut b, NO_VAL); // format_list, id_list, info_list, name_list
        }
        be64(&mut b, 0); // time_end
        be64(&mut b, 1_700_000_000); // time_start
        be32(&mut b, NO_VAL); // user_list
        be16(&mut b, 1); // with_assoc_info
        let c = SlurmdbTxnCond {
            cluster_list: list(&["c1"]),
            time_start: 1_700_000_000,
            with_assoc_info: 1,
            ..Default::default()
        };
        check(v, 1445, &b, &DbdMessage::GetTxn(c));

        let b = one(|b| {
            be32(b, 0); // accts
            be16(b, 1405); // action: DBD_ADD_CLUSTERS
            packstr(b, "root"); // actor_name
            packstr(b, "c1"); // clusters
            be32(b, 9); // id
            packstr(b, "mod_time=1700000000"); // set_info
            be64(b, 1_700_000_000); // timestamp
            be32(b, 0); // users
            packstr(b, "name='c1'"); // where_query
        });
        let t = SlurmdbTxnRec {
            action: 1405,
            actor_name: s("root"),
            clusters: s("c1"),
            id: 9,
            set_info: s("mod_time=1700000000"),
            timestamp: 1_700_000_000,
            where_query: s("name='c1'"),
            ..Default::default()
        };
        check(v, 1446, &b, &DbdMessage::GotTxn(listed(t)));

        let mut b = Vec::new();
        be16(&mut b, 0); // archive_data
        be64(&mut b, 1_700_086_400); // end
        be64(&mut b, 1_700_000_000); // start
        let m = DbdRollUsageMsg {
            archive_data: 0,
            end: 1_700_086_400,
            start: 1_700_000_000,
        };
        check(v, 1440, &b, &DbdMessage::RollUsage(m));
    }
}

#[test]
fn a_user_list_is_bounded_by_the_bytes_left() {
    let v = V::V26_05;
    let mut b = Vec::new();
    be32(&mut b, 1);
    b.push(1); // present
    be16(&mut b, 1); // admin_level
    let at = b.len();
    be32(&mut b, 0x0100_0000); // assoc_list: far more than the bytes left
    b.extend([0; 32]);
    let e = DbdMessage::decode_framed(v, &frame(1423, &b)).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::CountTooLarge {
            count: 0x0100_0000,
            remaining: 32
        }
    );
    assert_eq!(e.offset, at, "{e}");
    assert_eq!(e.path(), "DBD_GOT_USERS.my_list.[0].rec.assoc_list");
}

/// ACCOUNTING_UPDATE_MSG's body (`_pack_accounting_update_msg`) in release `v`.
fn accounting_update(v: V, body: &[u8]) -> crate::error::Result<crate::Message> {
    crate::Message::decode(v, crate::MsgType::AccountingUpdateMsg, body)
}

#[test]
fn update_objects_per_release() {
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 4); // update_list: a plain count
        be16(&mut b, 9); // SLURMDB_ADD_QOS
        be32(&mut b, 1);
        qos_rec_body(&mut b);
        be16(&mut b, 4); // SLURMDB_MODIFY_USER
        be32(&mut b, 1);
        user_body(&mut b, v);
        be16(&mut b, 15); // SLURMDB_ADD_CLUSTER: the type alone
        be16(&mut b, 7); // SLURMDB_REMOVE_ASSOC
        be32(&mut b, NO_VAL); // no list
        let m = AccountingUpdateMsg {
            update_list: vec![
                SlurmdbUpdateObject::AddQos(Some(vec![qos_rec_value()])),
                SlurmdbUpdateObject::ModifyUser(Some(vec![user_value(v)])),
                SlurmdbUpdateObject::AddCluster,
                SlurmdbUpdateObject::RemoveAssoc(None),
            ],
        };
        let got = accounting_update(v, &b).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(got, crate::Message::AccountingUpdateMsg(m), "{v}");
        assert_eq!(got.encode_to_vec(v), b, "{v}");
    }
}

#[test]
fn update_objects_without_a_codec_are_refused_at_their_type() {
    for ty in [0u16, 24, 1489] {
        let mut b = Vec::new();
        be32(&mut b, 2);
        be16(&mut b, 16); // SLURMDB_REMOVE_CLUSTER
        be16(&mut b, ty);
        be32(&mut b, 0);
        let e = accounting_update(V::V24_11, &b).unwrap_err();
        assert_eq!(
            e.kind,
            DecodeErrorKind::BadValue {
                what: "update object type",
                value: u64::from(ty)
            }
        );
        assert_eq!(e.offset, 6, "{e}");
    }
    // The stats push is typed by DBD_GOT_STATS' number.
    let mut b = Vec::new();
    be32(&mut b, 1);
    be16(&mut b, 1490);
    be32(&mut b, 0); // an empty list
    let m = accounting_update(V::V26_05, &b).unwrap();
    let crate::Message::AccountingUpdateMsg(u) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(u.update_list, [SlurmdbUpdateObject::GotStats(Some(vec![]))]);
}

#[test]
fn used_limits_carry_their_arrays_counts() {
    for v in V::ALL {
        let mut b = Vec::new();
        be32(&mut b, 1); // accrue_cnt
        packstr(&mut b, "research"); // acct
        be32(&mut b, 2); // jobs
        be32(&mut b, 3); // submit_jobs
        be32(&mut b, 2); // tres: pack64_array
        be64(&mut b, 4);
        be64(&mut b, 5);
        be32(&mut b, 0); // tres_run_secs: none
        be32(&mut b, 1000); // uid
        let u = SlurmdbUsedLimits {
            accrue_cnt: 1,
            acct: s("research"),
            jobs: 2,
            submit_jobs: 3,
            tres: vec![4, 5],
            tres_run_secs: vec![],
            uid: 1000,
        };
        assert_eq!(
            crate::pack::decode_exact::<SlurmdbUsedLimits>(&b, v).unwrap(),
            u
        );
        assert_eq!(crate::pack::encode_to_vec(&u, v), b);
    }
}

#[test]
fn qos_usage_updates_per_release() {
    for v in V::ALL {
        let new = v >= V::V23_11;
        let mut b = Vec::new();
        be32(&mut b, 1);
        be16(&mut b, 21); // SLURMDB_REMOVE_QOS_USAGE, from 23.11 SLURMDB_UPDATE_QOS_USAGE
        be32(&mut b, 1);
        qos_rec_body(&mut b);
        if new {
            for k in 0..11u64 {
                // grp_tres_mins_ctld .. min_tres_pj_ctld: pack64_array of tres_cnt (2)
                be32(&mut b, 2);
                be64(&mut b, k);
                be64(&mut b, u64::MAX);
            }
            be32(&mut b, 1); // usage.accrue_cnt
            be32(&mut b, 2); // usage.grp_used_jobs
            be32(&mut b, 3); // usage.grp_used_submit_jobs
            be32(&mut b, 2); // usage.grp_used_tres
            be64(&mut b, 1);
            be64(&mut b, 1024);
            be32(&mut b, 0); // usage.grp_used_tres_run_secs: none
            be64(&mut b, crate::types::Double::from_value(60.0).scaled_bits); // grp_used_wall
            be64(&mut b, crate::types::Double::from_value(0.5).scaled_bits); // norm_priority
            packstr(&mut b, "120.000000"); // usage_raw: packlongdouble's %Lf text
            be32(&mut b, 2); // usage_tres_raw: packlongdouble_array
            packstr(&mut b, "120.000000");
            packstr(&mut b, "0.000000");
            be32(&mut b, 1); // user_limit_list
            be32(&mut b, 0); // .accrue_cnt
            be32(&mut b, 0); // .acct: NULL
            be32(&mut b, 1); // .jobs
            be32(&mut b, 1); // .submit_jobs
            be32(&mut b, 2); // .tres
            be64(&mut b, 1);
            be64(&mut b, 1024);
            be32(&mut b, 2); // .tres_run_secs
            be64(&mut b, 60);
            be64(&mut b, 61_440);
            be32(&mut b, 1000); // .uid
            be32(&mut b, NO_VAL); // acct_limit_list: none
        }
        let d = crate::types::Double::from_value;
        let mut u = SlurmdbQosUsageUpdate {
            qos: qos_rec_value(),
            ..Default::default()
        };
        if new {
            let arr = |k: u64| vec![k, u64::MAX];
            u.grp_tres_mins_ctld = arr(0);
            u.grp_tres_run_mins_ctld = arr(1);
            u.grp_tres_ctld = arr(2);
            u.max_tres_mins_pj_ctld = arr(3);
            u.max_tres_run_mins_pa_ctld = arr(4);
            u.max_tres_run_mins_pu_ctld = arr(5);
            u.max_tres_pa_ctld = arr(6);
            u.max_tres_pj_ctld = arr(7);
            u.max_tres_pn_ctld = arr(8);
            u.max_tres_pu_ctld = arr(9);
            u.min_tres_pj_ctld = arr(10);
            u.usage = SlurmdbQosUsage {
                accrue_cnt: 1,
                grp_used_jobs: 2,
                grp_used_submit_jobs: 3,
                grp_used_tres: vec![1, 1024],
                grp_used_tres_run_secs: vec![],
                grp_used_wall: d(60.0),
                norm_priority: d(0.5),
                usage_raw: s("120.000000"),
                usage_tres_raw: vec![s("120.000000"), s("0.000000")],
                user_limit_list: Some(vec![SlurmdbUsedLimits {
                    jobs: 1,
                    submit_jobs: 1,
                    tres: vec![1, 1024],
                    tres_run_secs: vec![60, 61_440],
                    uid: 1000,
                    ..Default::default()
                }]),
                acct_limit_list: None,
            };
        }
        let m = AccountingUpdateMsg {
            update_list: vec![SlurmdbUpdateObject::UpdateQosUsage(Some(vec![u]))],
        };
        let got = accounting_update(v, &b).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(got, crate::Message::AccountingUpdateMsg(m), "{v}");
        assert_eq!(got.encode_to_vec(v), b, "{v}");
    }
}
