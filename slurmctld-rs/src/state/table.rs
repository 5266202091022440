//! The controller's tables, built so that publishing a read snapshot after a
//! batch of commands is cheap: jobs and steps live in persistent maps
//! (`imbl::OrdMap`, O(1) to clone) of shared records, nodes in a vector of
//! shared records. A change copies one record (and an O(log n) path of the
//! map), never the table, so a submit no longer costs O(jobs).
//!
//! The APIs follow `BTreeMap`/`Vec` so that code written against those keeps
//! compiling; `get_mut`/`IndexMut` copy a record only while a snapshot still
//! shares it (`Arc::make_mut`).

use super::job::{Job, JobState, UserInfo};
use super::node::Node;
use imbl::{OrdMap, OrdSet};
use std::cmp::Reverse;
use std::fmt;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

/// A map of shared records with `BTreeMap`'s API (the parts used here).
pub struct Table<K: Ord + Clone, V>(OrdMap<K, Arc<V>>);

impl<K: Ord + Clone, V> Clone for Table<K, V> {
    fn clone(&self) -> Self {
        Table(self.0.clone())
    }
}

impl<K: Ord + Clone, V> Default for Table<K, V> {
    fn default() -> Self {
        Table(OrdMap::new())
    }
}

impl<K: Ord + Clone, V: PartialEq> PartialEq for Table<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K: Ord + Clone + fmt::Debug, V: fmt::Debug> fmt::Debug for Table<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, &**v)))
            .finish()
    }
}

impl<K: Ord + Clone, V: Clone> Table<K, V> {
    pub fn new() -> Self {
        Self::default()
    }
    /// Whether both are the very same map (a clone with no change since).
    /// Any change made while a clone is alive copies what it touches, so
    /// this is how a batch's changes are seen against the last snapshot.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        self.0.ptr_eq(&other.0)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn get(&self, k: &K) -> Option<&V> {
        self.0.get(k).map(|v| &**v)
    }
    pub fn contains_key(&self, k: &K) -> bool {
        self.0.contains_key(k)
    }
    pub fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.0.get_mut(k).map(Arc::make_mut)
    }
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        self.0.insert(k, Arc::new(v)).map(Arc::unwrap_or_clone)
    }
    pub fn remove(&mut self, k: &K) -> Option<V> {
        self.0.remove(k).map(Arc::unwrap_or_clone)
    }
    pub fn clear(&mut self) {
        self.0.clear();
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + '_ {
        self.0.iter().map(|(k, v)| (k, &**v))
    }
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + '_ {
        self.0.keys()
    }
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.0.values().map(|v| &**v)
    }
    /// Keeps the entries `f` says yes to (a read-only look at each).
    pub fn retain(&mut self, mut f: impl FnMut(&K, &V) -> bool) -> Vec<K> {
        let gone: Vec<K> = self
            .0
            .iter()
            .filter(|(k, v)| !f(k, v))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &gone {
            self.0.remove(k);
        }
        gone
    }
    /// `entry(k).or_default()`.
    pub fn entry_or_default(&mut self, k: K) -> &mut V
    where
        V: Default,
    {
        Arc::make_mut(self.0.entry(k).or_default())
    }
    /// Runs `f` on every record (copying those a snapshot shares).
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&K, &mut V)) {
        let keys: Vec<K> = self.0.keys().cloned().collect();
        for k in keys {
            if let Some(v) = self.0.get_mut(&k) {
                f(&k, Arc::make_mut(v));
            }
        }
    }
}

impl<K: Ord + Clone, V: Clone> Index<&K> for Table<K, V> {
    type Output = V;
    fn index(&self, k: &K) -> &V {
        &self.0[k]
    }
}

impl<'a, K: Ord + Clone, V: Clone> IntoIterator for &'a Table<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Box<dyn Iterator<Item = (&'a K, &'a V)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// Where a pending job stands in its partition's queue: highest priority
/// first, then the oldest, then the lowest id.
pub type QueueKey = (usize, Reverse<u32>, i64, u32);

fn queue_key(j: &Job) -> Option<QueueKey> {
    (j.state == JobState::Pending).then_some((j.part, Reverse(j.priority), j.submit_time, j.job_id))
}

/// A user's jobs of one name (what a singleton dependency waits on).
pub type NameKey = (u32, Option<String>);

fn name_key(j: &Job) -> Option<NameKey> {
    matches!(j.state, JobState::Pending | JobState::Running)
        .then(|| (j.user.uid, j.req.name().map(str::to_string)))
}

/// The job table plus an index of the pending jobs in scheduling order, so
/// that a scheduling pass looks at the head of each queue instead of sorting
/// every pending job. The index follows every change made through this API:
/// `get_mut` notes the job, and the index is brought up to date before it is
/// read.
#[derive(Clone, Default)]
pub struct Jobs {
    map: Table<u32, Job>,
    queue: OrdSet<QueueKey>,
    keyed: OrdMap<u32, QueueKey>,
    /// Pending and running jobs by user and name, for singleton
    /// dependencies (a scan of every job per test otherwise).
    by_name: OrdMap<NameKey, OrdSet<u32>>,
    named: OrdMap<u32, NameKey>,
    /// Jobs handed out mutably since the index was last brought up to date.
    touched: Vec<u32>,
    /// The users of the jobs, one record each (see `share_user`).
    users: OrdMap<u32, Arc<UserInfo>>,
}

impl fmt::Debug for Jobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.map.fmt(f)
    }
}

impl Jobs {
    pub fn new() -> Self {
        Self::default()
    }
    /// Whether no job record changed since `other` was cloned from this.
    pub fn same_records(&self, other: &Self) -> bool {
        self.map.ptr_eq(&other.map)
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    pub fn get(&self, id: &u32) -> Option<&Job> {
        self.map.get(id)
    }
    pub fn contains_key(&self, id: &u32) -> bool {
        self.map.contains_key(id)
    }
    pub fn get_mut(&mut self, id: &u32) -> Option<&mut Job> {
        let j = self.map.get_mut(id)?;
        self.touched.push(*id);
        Some(j)
    }
    pub fn insert(&mut self, id: u32, mut j: Job) -> Option<Job> {
        self.touched.push(id);
        j.user = self.share_user(j.user);
        self.map.insert(id, j)
    }
    /// The one copy of `u` the table keeps, so that a user's jobs share
    /// its strings; a user whose details changed gets a new copy.
    fn share_user(&mut self, u: Arc<UserInfo>) -> Arc<UserInfo> {
        match self.users.get(&u.uid) {
            Some(kept) if Arc::ptr_eq(kept, &u) || **kept == *u => kept.clone(),
            _ => {
                self.users.insert(u.uid, u.clone());
                u
            }
        }
    }
    pub fn remove(&mut self, id: &u32) -> Option<Job> {
        self.unindex(*id);
        self.map.remove(id)
    }
    pub fn clear(&mut self) {
        *self = Jobs::default();
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&u32, &Job)> + '_ {
        self.map.iter()
    }
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &u32> + '_ {
        self.map.keys()
    }
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Job> + '_ {
        self.map.values()
    }
    pub fn retain(&mut self, f: impl FnMut(&u32, &Job) -> bool) {
        for id in self.map.retain(f) {
            self.unindex(id);
        }
    }
    pub fn for_each_mut(&mut self, mut f: impl FnMut(&mut Job)) {
        let touched = &mut self.touched;
        self.map.for_each_mut(|id, j| {
            touched.push(*id);
            f(j)
        });
    }

    fn unindex(&mut self, id: u32) {
        if let Some(k) = self.keyed.remove(&id) {
            self.queue.remove(&k);
        }
        self.unname(id);
    }

    fn unname(&mut self, id: u32) {
        if let Some(k) = self.named.remove(&id) {
            if let Some(set) = self.by_name.get_mut(&k) {
                set.remove(&id);
                if set.is_empty() {
                    self.by_name.remove(&k);
                }
            }
        }
    }

    /// Brings the pending index up to date with the jobs changed since.
    fn reindex(&mut self) {
        if self.touched.is_empty() {
            return;
        }
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        for id in touched {
            let name = self.map.get(&id).and_then(name_key);
            if name.as_ref() != self.named.get(&id) {
                self.unname(id);
                if let Some(k) = name {
                    self.by_name.entry(k.clone()).or_default().insert(id);
                    self.named.insert(id, k);
                }
            }
            let new = self.map.get(&id).and_then(queue_key);
            let old = self.keyed.get(&id).copied();
            if new == old {
                continue;
            }
            if let Some(k) = old {
                self.queue.remove(&k);
                self.keyed.remove(&id);
            }
            if let Some(k) = new {
                self.queue.insert(k);
                self.keyed.insert(id, k);
            }
        }
    }

    /// Pending jobs of partition `part` in queue order.
    pub fn queue_of(&mut self, part: usize) -> impl Iterator<Item = u32> + '_ {
        self.reindex();
        self.queue
            .range((part, Reverse(u32::MAX), i64::MIN, 0)..=(part, Reverse(0), i64::MAX, u32::MAX))
            .map(|k| k.3)
    }

    /// Pending and running jobs of user `uid` named `name`, ascending.
    pub fn active_named(&mut self, uid: u32, name: &Option<String>) -> Vec<u32> {
        self.reindex();
        self.by_name
            .get(&(uid, name.clone()))
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// How many jobs are pending.
    pub fn pending_count(&mut self) -> usize {
        self.reindex();
        self.queue.len()
    }
}

impl Index<&u32> for Jobs {
    type Output = Job;
    fn index(&self, id: &u32) -> &Job {
        &self.map[id]
    }
}

impl<'a> IntoIterator for &'a Jobs {
    type Item = (&'a u32, &'a Job);
    type IntoIter = Box<dyn Iterator<Item = (&'a u32, &'a Job)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

/// The nodes, by index, as shared records.
#[derive(Clone, Default)]
pub struct Nodes(Vec<Arc<Node>>);

impl fmt::Debug for Nodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Nodes {
    /// Whether no node record changed since `other` was cloned from this.
    pub fn same_records(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| Arc::ptr_eq(a, b))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<&Node> {
        self.0.get(i).map(|n| &**n)
    }
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Node> {
        self.0.get_mut(i).map(Arc::make_mut)
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Node> + ExactSizeIterator + '_ {
        self.0.iter().map(|n| &**n)
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Node> + '_ {
        self.0.iter_mut().map(Arc::make_mut)
    }
    /// Takes every node out (reconfigure rebuilds the table).
    pub fn take_all(&mut self) -> Vec<Node> {
        std::mem::take(&mut self.0)
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect()
    }
}

impl FromIterator<Node> for Nodes {
    fn from_iter<I: IntoIterator<Item = Node>>(it: I) -> Self {
        Nodes(it.into_iter().map(Arc::new).collect())
    }
}

impl Index<usize> for Nodes {
    type Output = Node;
    fn index(&self, i: usize) -> &Node {
        &self.0[i]
    }
}

impl IndexMut<usize> for Nodes {
    fn index_mut(&mut self, i: usize) -> &mut Node {
        Arc::make_mut(&mut self.0[i])
    }
}

impl<'a> IntoIterator for &'a mut Nodes {
    type Item = &'a mut Node;
    type IntoIter = Box<dyn Iterator<Item = &'a mut Node> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter_mut())
    }
}

impl<'a> IntoIterator for &'a Nodes {
    type Item = &'a Node;
    type IntoIter = Box<dyn Iterator<Item = &'a Node> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_clone_is_a_snapshot() {
        let mut t: Table<u32, String> = Table::new();
        t.insert(1, "a".into());
        let snap = t.clone();
        *t.get_mut(&1).unwrap() = "b".into();
        t.insert(2, "c".into());
        assert_eq!(snap.get(&1).map(String::as_str), Some("a"));
        assert_eq!(snap.len(), 1);
        assert_eq!(t.get(&1).map(String::as_str), Some("b"));
        let gone = t.retain(|k, _| *k != 1);
        assert_eq!(gone, vec![1]);
        assert_eq!(t.keys().copied().collect::<Vec<_>>(), vec![2]);
        *t.entry_or_default(3) += "x";
        assert_eq!(t[&3], "x");
    }
}
