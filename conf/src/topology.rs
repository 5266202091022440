//! `topology.conf`: the switch tree (topology/tree) and blocks
//! (topology/block).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{ConfError, Location};
use crate::hostlist::{Hostlist, MAX_EXPANDED_BYTES, MAX_HOSTS};
use crate::keywords::{self, Kind};
use crate::lexer::{self, parse_fields, Line, LineSink, Loader, Walker};
use crate::units;

/// Longest switch name stock accepts (`HOST_NAME_MAX`).
const MAX_SWITCH_NAME: usize = 64;

/// One `SwitchName=` record with its place in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    pub name: String,
    /// Set on leaf switches.
    pub nodes: Option<Hostlist>,
    /// Child switch names as written.
    pub switches: Option<Hostlist>,
    pub link_speed: u32,
    /// 0 for leaves, else one more than the highest child.
    pub level: u16,
    /// Index into [`TopologyConf::switches`].
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub at: Location,
}

/// One `BlockName=` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub name: String,
    pub nodes: Option<Hostlist>,
    pub at: Location,
}

/// A parsed and validated `topology.conf`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologyConf {
    pub switches: Vec<Switch>,
    pub blocks: Vec<Block>,
    pub block_sizes: Option<String>,
    /// Node name → index of its leaf switch (first one if listed twice).
    leaf_of: BTreeMap<String, usize>,
    pub warnings: Vec<String>,
}

impl TopologyConf {
    pub fn from_file(path: impl AsRef<Path>) -> Result<TopologyConf, ConfError> {
        lexer::load_file(path.as_ref(), Self::parse_with_loader)
    }

    pub fn parse_str(text: &str, origin: impl AsRef<Path>) -> Result<TopologyConf, ConfError> {
        Self::parse_with_loader(text.as_bytes(), origin.as_ref(), &lexer::read_file)
    }

    pub fn parse_with_loader(
        bytes: &[u8],
        origin: &Path,
        loader: Loader<'_>,
    ) -> Result<TopologyConf, ConfError> {
        let mut t = TopologyConf::default();
        Walker::new(loader).walk(bytes, origin, &mut t)?;
        t.build()?;
        Ok(t)
    }

    /// Name of the leaf switch `node` hangs off.
    pub fn leaf_switch(&self, node: &str) -> Option<&str> {
        self.leaf_index(node)
            .and_then(|i| self.switches.get(i))
            .map(|s| s.name.as_str())
    }

    pub fn leaf_index(&self, node: &str) -> Option<usize> {
        self.leaf_of.get(node).copied()
    }

    /// Every node that has a leaf switch, with that switch's index.
    pub fn node_leaves(&self) -> impl Iterator<Item = (&str, usize)> {
        self.leaf_of.iter().map(|(n, &i)| (n.as_str(), i))
    }

    pub fn switch(&self, name: &str) -> Option<&Switch> {
        self.switches.iter().find(|s| s.name == name)
    }

    /// Switches without a parent.
    pub fn roots(&self) -> impl Iterator<Item = &Switch> {
        self.switches.iter().filter(|s| s.parent.is_none())
    }

    /// Switch indices from `node`'s leaf up to its root.
    pub fn path_to_root(&self, node: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = self.leaf_index(node);
        while let Some(i) = cur {
            if out.contains(&i) {
                break;
            }
            out.push(i);
            cur = self.switches.get(i).and_then(|s| s.parent);
        }
        out
    }

    fn build(&mut self) -> Result<(), ConfError> {
        let index: BTreeMap<String, usize> = self
            .switches
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let mut children: Vec<Vec<usize>> = Vec::with_capacity(self.switches.len());
        for (i, sw) in self.switches.iter().enumerate() {
            let mut kids = Vec::new();
            if let Some(list) = &sw.switches {
                for child in list.iter() {
                    match index.get(&child) {
                        Some(&j) if j != i => kids.push(j),
                        _ => {
                            return Err(ConfError::invalid(
                                &sw.at,
                                format!("switch {} has invalid child ({child})", sw.name),
                            ))
                        }
                    }
                }
            }
            children.push(kids);
        }
        // Levels by repeated relaxation; a round with no progress means a cycle.
        let mut level: Vec<Option<u16>> = self
            .switches
            .iter()
            .map(|s| s.nodes.as_ref().map(|_| 0))
            .collect();
        loop {
            let mut progress = false;
            let mut pending = None;
            for (i, kids) in children.iter().enumerate() {
                if level.get(i).copied().flatten().is_some() {
                    continue;
                }
                let lv: Option<Vec<u16>> = kids
                    .iter()
                    .map(|&j| level.get(j).copied().flatten())
                    .collect();
                match lv {
                    Some(v) => {
                        let l = v.iter().copied().max().unwrap_or(0).saturating_add(1);
                        if let Some(slot) = level.get_mut(i) {
                            *slot = Some(l);
                        }
                        progress = true;
                    }
                    None => pending = Some(i),
                }
            }
            match pending {
                None => break,
                Some(i) if !progress => {
                    let at = self
                        .switches
                        .get(i)
                        .map(|s| s.at.clone())
                        .unwrap_or_default();
                    let name = self
                        .switches
                        .get(i)
                        .map(|s| s.name.clone())
                        .unwrap_or_default();
                    return Err(ConfError::invalid(
                        &at,
                        format!("switch {name} is part of a cycle"),
                    ));
                }
                Some(_) => {}
            }
        }
        for (i, kids) in children.iter().enumerate() {
            for &j in kids {
                if let Some(c) = self.switches.get_mut(j) {
                    c.parent = Some(i);
                }
            }
        }
        let mut total = 0usize;
        let mut bytes = 0usize;
        for (i, (sw, (kids, lv))) in self
            .switches
            .iter_mut()
            .zip(children.into_iter().zip(level))
            .enumerate()
        {
            sw.children = kids;
            sw.level = lv.unwrap_or(0);
            if let Some(nodes) = &sw.nodes {
                total = total.saturating_add(nodes.len());
                if total > MAX_HOSTS {
                    return Err(ConfError::invalid(
                        &sw.at,
                        format!("more than {MAX_HOSTS} switch nodes"),
                    ));
                }
                for n in nodes.iter() {
                    bytes = bytes.saturating_add(n.len());
                    if bytes > MAX_EXPANDED_BYTES {
                        return Err(ConfError::invalid(
                            &sw.at,
                            "switch node names too large to expand",
                        ));
                    }
                    if let Some(&prev) = self.leaf_of.get(&n) {
                        if prev != i {
                            self.warnings.push(format!(
                                "{}: node {n} is on more than one leaf switch",
                                sw.at
                            ));
                        }
                    } else {
                        self.leaf_of.insert(n, i);
                    }
                }
            }
        }
        Ok(())
    }
}

impl LineSink for TopologyConf {
    fn line(&mut self, line: &Line) -> Result<(), ConfError> {
        let at = &line.at;
        let Some((p, kw)) = lexer::keyword_pair(line, keywords::TOPOLOGY)? else {
            return Ok(());
        };
        if kw.kind != Kind::Line {
            lexer::expect_end(p.rest, at)?;
            self.block_sizes = Some(p.value.to_string());
            return Ok(());
        }
        let hl = |key: &str, v: Option<&str>| -> Result<Option<Hostlist>, ConfError> {
            v.map(|v| {
                Hostlist::parse(v).map_err(|e| ConfError::Hostlist {
                    at: at.clone(),
                    key: key.to_string(),
                    value: v.to_string(),
                    source: e,
                })
            })
            .transpose()
        };
        if kw.name == "BlockName" {
            let f = parse_fields(p.rest, keywords::BLOCK, at)?;
            self.blocks.push(Block {
                name: p.value.to_string(),
                nodes: hl("Nodes", f.get("Nodes"))?,
                at: at.clone(),
            });
            return Ok(());
        }
        let f = parse_fields(p.rest, keywords::SWITCH, at)?;
        let name = p.value;
        if name.len() > MAX_SWITCH_NAME {
            return Err(ConfError::invalid(
                at,
                format!("SwitchName ({name}) must be shorter than {MAX_SWITCH_NAME} chars"),
            ));
        }
        if self.switches.iter().any(|s| s.name == name) {
            return Err(ConfError::invalid(
                at,
                format!("switch ({name}) has already been defined"),
            ));
        }
        let nodes = hl("Nodes", f.get("Nodes"))?;
        let switches = hl("Switches", f.get("Switches"))?;
        match (&nodes, &switches) {
            (Some(_), Some(_)) => {
                return Err(ConfError::invalid(
                    at,
                    format!("switch {name} has both child switches and nodes"),
                ))
            }
            (None, None) => {
                return Err(ConfError::invalid(
                    at,
                    format!("switch {name} has neither child switches nor nodes"),
                ))
            }
            _ => {}
        }
        self.switches.push(Switch {
            name: name.to_string(),
            nodes,
            switches,
            link_speed: f
                .get("LinkSpeed")
                .and_then(|v| units::parse_u32(v).ok())
                .unwrap_or(1),
            level: 0,
            parent: None,
            children: Vec::new(),
            at: at.clone(),
        });
        Ok(())
    }
}
