//! `gres.conf`: generic resource records, global or per `NodeName`.

use std::path::Path;

use crate::error::{ConfError, Location};
use crate::hostlist::{Hostlist, MAX_EXPANDED_BYTES};
use crate::keywords::{self, Kind};
use crate::lexer::{self, parse_fields, Line, LineSink, Loader, Walker};
use crate::units;

/// One `Name=` or `NodeName=... Name=` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresRecord {
    /// `None`: applies to every node.
    pub node_names: Option<Hostlist>,
    pub name: String,
    pub type_name: Option<String>,
    /// `File`/`Files`/`MultipleFiles` as written.
    pub file_expr: Option<String>,
    /// Device files, expanded.
    pub files: Vec<String>,
    pub multiple_files: bool,
    pub count: u64,
    /// `Cores=` (or the deprecated `CPUs=`), as written; not checked
    /// against the node's CPU count here.
    pub cores: Option<String>,
    pub links: Option<String>,
    pub flags: Vec<String>,
    /// Per-line `AutoDetect` (only valid with `NodeName`).
    pub autodetect: Option<String>,
    pub at: Location,
}

impl GresRecord {
    /// Whether a `Flags=` token is present (any case).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f.eq_ignore_ascii_case(flag))
    }

    /// Whether this record applies to `node`.
    pub fn applies_to(&self, node: &str) -> bool {
        self.node_names.as_ref().is_none_or(|h| h.contains(node))
    }
}

/// A parsed `gres.conf`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GresConf {
    /// Global `AutoDetect=`.
    pub autodetect: Option<String>,
    pub records: Vec<GresRecord>,
    /// Per-node `AutoDetect` lines without `Name`: (nodes, mode).
    pub node_autodetect: Vec<(Hostlist, String)>,
    pub warnings: Vec<String>,
    /// Expanded `File` bytes so far, bounded like a single hostlist.
    file_bytes: usize,
}

impl GresConf {
    pub fn from_file(path: impl AsRef<Path>) -> Result<GresConf, ConfError> {
        lexer::load_file(path.as_ref(), Self::parse_with_loader)
    }

    pub fn parse_str(text: &str, origin: impl AsRef<Path>) -> Result<GresConf, ConfError> {
        Self::parse_with_loader(text.as_bytes(), origin.as_ref(), &lexer::read_file)
    }

    pub fn parse_with_loader(
        bytes: &[u8],
        origin: &Path,
        loader: Loader<'_>,
    ) -> Result<GresConf, ConfError> {
        let mut conf = GresConf::default();
        Walker::new(loader).walk(bytes, origin, &mut conf)?;
        Ok(conf)
    }

    /// Records that apply to `node`, in file order.
    pub fn for_node<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a GresRecord> + 'a {
        self.records.iter().filter(move |r| r.applies_to(node))
    }

    /// The `AutoDetect` mode in effect for `node`.
    pub fn autodetect_for(&self, node: &str) -> Option<&str> {
        self.node_autodetect
            .iter()
            .rev()
            .find(|(h, _)| h.contains(node))
            .map(|(_, m)| m.as_str())
            .or(self.autodetect.as_deref())
    }
}

impl LineSink for GresConf {
    fn line(&mut self, line: &Line) -> Result<(), ConfError> {
        let at = &line.at;
        let Some((p, kw)) = lexer::keyword_pair(line, keywords::GRES_TOP)? else {
            return Ok(());
        };
        if kw.kind != Kind::Line {
            lexer::expect_end(p.rest, at)?;
            self.autodetect = Some(p.value.to_string());
            return Ok(());
        }
        let f = parse_fields(p.rest, keywords::GRES, at)?;
        let (node_names, name) = if kw.name == "NodeName" {
            let hl = Hostlist::parse(p.value).map_err(|e| ConfError::Hostlist {
                at: at.clone(),
                key: "NodeName".into(),
                value: p.value.to_string(),
                source: e,
            })?;
            (Some(hl), f.get("Name").map(str::to_string))
        } else {
            (None, Some(p.value.to_string()))
        };
        let autodetect = f.get("AutoDetect").map(str::to_string);
        if let (Some(mode), None) = (&autodetect, &node_names) {
            self.warnings.push(format!(
                "{at}: in-line AutoDetect={mode} requires NodeName to take effect"
            ));
        }
        let Some(name) = name else {
            match (node_names, autodetect) {
                (Some(h), Some(mode)) => self.node_autodetect.push((h, mode)),
                _ => self.warnings.push(format!(
                    "{at}: invalid GRES data, no type name; line ignored"
                )),
            }
            return Ok(());
        };

        let file_expr = f.get("File").or_else(|| f.get("Files"));
        let multi_expr = f.get("MultipleFiles");
        if file_expr.is_some() && multi_expr.is_some() {
            return Err(ConfError::invalid(
                at,
                "File and MultipleFiles options are mutually exclusive",
            ));
        }
        let expr = file_expr.or(multi_expr);
        let files = match expr {
            None => Vec::new(),
            Some(e) => Hostlist::parse(e)
                .map_err(|err| ConfError::Hostlist {
                    at: at.clone(),
                    key: "File".into(),
                    value: e.to_string(),
                    source: err,
                })?
                .expand(),
        };
        self.file_bytes = files
            .iter()
            .fold(self.file_bytes, |acc, f| acc.saturating_add(f.len()));
        if self.file_bytes > MAX_EXPANDED_BYTES {
            return Err(ConfError::invalid(
                at,
                "device file names too large to expand",
            ));
        }
        let mut count = files.len() as u64;
        if multi_expr.is_some() {
            if files.len() < 2 {
                return Err(ConfError::invalid(
                    at,
                    "MultipleFiles does not contain multiple files. Use File instead",
                ));
            }
            count = 1;
        }
        // mps and shard may hand out many units per device file.
        let shared = name.eq_ignore_ascii_case("mps") || name.eq_ignore_ascii_case("shard");
        if let Some(c) = f.get("Count") {
            let bad = || ConfError::value(at, "Count", "count", c);
            let digits_end = c.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(c.len());
            let (num, suffix) = c.split_at(digits_end);
            let num: u64 = if num.is_empty() {
                0
            } else {
                num.parse().map_err(|_| bad())?
            };
            let mult = units::suffix_mult(suffix).ok_or_else(bad)?;
            let n = num
                .checked_mul(mult)
                .filter(|&n| n < units::NO_VAL64)
                .ok_or_else(bad)?;
            if count != 0 && count != n && !shared {
                return Err(ConfError::invalid(
                    at,
                    format!("Invalid GRES record for {name}, count does not match File value"),
                ));
            }
            count = n;
        } else if count == 0 {
            count = 1;
        }

        self.records.push(GresRecord {
            node_names,
            name,
            type_name: f.get("Type").map(str::to_string),
            file_expr: expr.map(str::to_string),
            files,
            multiple_files: multi_expr.is_some(),
            count,
            cores: f.get("Cores").or_else(|| f.get("CPUs")).map(str::to_string),
            links: f.get("Links").or_else(|| f.get("Link")).map(str::to_string),
            flags: f
                .get("Flags")
                .map(|s| {
                    s.split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            autodetect: autodetect.filter(|_| kw.name == "NodeName"),
            at: at.clone(),
        });
        Ok(())
    }
}
