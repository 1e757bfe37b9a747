//! What the user sees when a file is wrong: one [`Diagnostic`] per problem, each naming
//! the file, line, column, key path, what is wrong and how to fix it.
//!
//! Everything that validates input returns [`ConfigError`]; nothing in this crate prints.

use std::fmt;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use crate::de::DeError;
use crate::read::Refusal;
use crate::yaml::{Mark, SyntaxError, SyntaxKind};

/// One problem in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
    /// Key path such as `mpls[3].in_label`; empty for the document itself.
    pub path: String,
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub hint: Option<String>,
}

impl Diagnostic {
    pub(crate) fn from_de(file: &FsPath, e: DeError) -> Diagnostic {
        let mark = e.mark.unwrap_or(Mark { line: 1, col: 1 });
        Diagnostic {
            file: file.to_path_buf(),
            line: mark.line,
            col: mark.col,
            path: e.path.unwrap_or_default(),
            message: e.message,
            hint: e.hint,
        }
    }

    pub(crate) fn from_syntax(file: &FsPath, e: SyntaxError) -> Diagnostic {
        let (message, hint) = match e.kind {
            SyntaxKind::Malformed => (
                format!("malformed YAML: {}", e.message),
                "check indentation, brackets and quotes around this position",
            ),
            SyntaxKind::TooDeep => (
                e.message,
                "a routes file nests 6 deep at most (ipv4 > item > nexthops > item > push); \
                 this file is broken or hostile",
            ),
            SyntaxKind::TooManyAliases | SyntaxKind::AliasExpansion => (
                e.message,
                "aliases are expanded by copying; write the values out, or share next hops \
                 with prefix_groups",
            ),
        };
        Diagnostic {
            file: file.to_path_buf(),
            line: e.mark.line,
            col: e.mark.col,
            path: String::new(),
            message,
            hint: Some(hint.into()),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.col)?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n    help: {h}")?;
        }
        Ok(())
    }
}

/// Every problem found in one or more files, in file then line order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub(crate) fn from_de(file: &FsPath, errors: Vec<DeError>) -> Diagnostics {
        let mut d: Vec<Diagnostic> = errors
            .into_iter()
            .map(|e| Diagnostic::from_de(file, e))
            .collect();
        d.sort_by_key(|x| (x.line, x.col));
        Diagnostics(d)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {d}")?;
        }
        Ok(())
    }
}

/// Why a configuration or routes file was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: Arc<std::io::Error>,
    },
    /// Not read at all: not a regular file, or over the size limit.
    #[error("cannot read {}: {why}\n    help: {}", path.display(), why.hint())]
    Refused { path: PathBuf, why: Refusal },
    #[error("{0}\n{n} error{s} found", n = .0.len(), s = if .0.len() == 1 { "" } else { "s" })]
    Invalid(Diagnostics),
}

impl ConfigError {
    pub(crate) fn io(path: &FsPath, e: std::io::Error) -> ConfigError {
        ConfigError::Io {
            path: path.to_path_buf(),
            source: Arc::new(e),
        }
    }

    /// The positioned problems, if this is a validation failure.
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match self {
            ConfigError::Invalid(d) => Some(d),
            ConfigError::Io { .. } | ConfigError::Refused { .. } => None,
        }
    }
}
