//! Just enough of the Prometheus text exposition format to read our own `/metrics`:
//! sample lines (name, labels, value); comments, types and timestamps are skipped.
//!
//! Strict about what it reads (a malformed line is an error naming the line), because a
//! wrong number in an operator's table is worse than no table.

use std::fmt;

/// One sample line: `name{label="value",...} value [timestamp]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Labels,
    pub value: f64,
}

impl Sample {
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Every sample of one scrape, in exposition order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exposition {
    pub samples: Vec<Sample>,
}

/// A line that is not in the text format.
#[derive(Debug, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    is_name_start(c) || c.is_ascii_digit()
}

/// Splits a metric or label name off the front of `s`.
fn name(s: &str) -> Option<(&str, &str)> {
    let end = s.find(|c: char| !is_name_char(c)).unwrap_or(s.len());
    match s.chars().next() {
        Some(c) if is_name_start(c) && end > 0 => Some((&s[..end], &s[end..])),
        _ => None,
    }
}

/// Parses `"..."` with the format's three escapes; returns the value and the rest.
fn quoted(s: &str) -> Result<(String, &str), String> {
    let mut chars = s
        .strip_prefix('"')
        .ok_or("expected '\"' before a label value")?
        .char_indices();
    let body = &s[1..];
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &body[i + 1..])),
            '\\' => match chars.next() {
                Some((_, '\\')) => out.push('\\'),
                Some((_, '"')) => out.push('"'),
                Some((_, 'n')) => out.push('\n'),
                other => return Err(format!("bad escape \\{:?} in a label value", other)),
            },
            c => out.push(c),
        }
    }
    Err("unterminated label value".into())
}

/// Label pairs, in order.
type Labels = Vec<(String, String)>;

fn labels(mut s: &str) -> Result<(Labels, &str), String> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix('}') {
            return Ok((out, rest));
        }
        let (k, rest) = name(s).ok_or("expected a label name")?;
        let rest = rest
            .trim_start()
            .strip_prefix('=')
            .ok_or_else(|| format!("expected '=' after label {k}"))?;
        let (v, rest) = quoted(rest.trim_start())?;
        out.push((k.to_string(), v));
        let rest = rest.trim_start();
        s = match rest.strip_prefix(',') {
            Some(r) => r,
            None if rest.starts_with('}') => rest,
            None => return Err(format!("expected ',' or '}}' after label {k}")),
        };
    }
}

fn value(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

fn sample(line: &str) -> Result<Sample, String> {
    let (n, rest) = name(line).ok_or("expected a metric name")?;
    let (labels, rest) = match rest.strip_prefix('{') {
        Some(r) => labels(r)?,
        None => (Vec::new(), rest),
    };
    let mut fields = rest.split_ascii_whitespace();
    let v = fields.next().ok_or("missing value")?;
    let v = value(v).ok_or_else(|| format!("bad value {v:?}"))?;
    if let Some(ts) = fields.next() {
        ts.parse::<i64>()
            .map_err(|_| format!("bad timestamp {ts:?}"))?;
    }
    if fields.next().is_some() {
        return Err("trailing text after the value".into());
    }
    Ok(Sample {
        name: n.to_string(),
        labels,
        value: v,
    })
}

impl Exposition {
    pub fn parse(text: &str) -> Result<Exposition, ParseError> {
        let mut samples = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            samples.push(sample(line).map_err(|msg| ParseError { line: i + 1, msg })?);
        }
        Ok(Exposition { samples })
    }

    /// Samples of one metric, in exposition order.
    pub fn series<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples.iter().filter(move |s| s.name == name)
    }

    /// The first sample of `name` whose labels include every pair of `want`.
    #[cfg(test)]
    pub fn get(&self, name: &str, want: &[(&str, &str)]) -> Option<f64> {
        self.series(name)
            .find(|s| want.iter().all(|(k, v)| s.label(k) == Some(v)))
            .map(|s| s.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_labels_escapes_special_values_and_timestamps() {
        let text = "# HELP a_total x\n# TYPE a_total counter\n\
                    a_total{port=\"in\",reason=\"q\\\"uo\\\\te\\n\"} 12 1700000000000\n\
                    b 1.5e3\n\
                    c{le=\"+Inf\",} +Inf\n\
                    d{} NaN\n\n";
        let e = Exposition::parse(text).unwrap();
        assert_eq!(e.samples.len(), 4);
        assert_eq!(e.samples[0].label("port"), Some("in"));
        assert_eq!(e.samples[0].label("reason"), Some("q\"uo\\te\n"));
        assert_eq!(e.get("a_total", &[("port", "in")]), Some(12.0));
        assert_eq!(e.get("a_total", &[("port", "out")]), None);
        assert_eq!(e.get("b", &[]), Some(1500.0));
        assert_eq!(e.get("c", &[("le", "+Inf")]), Some(f64::INFINITY));
        assert!(e.get("d", &[]).unwrap().is_nan());
    }

    #[test]
    fn malformed_lines_are_errors_naming_the_line() {
        for (bad, what) in [
            ("x{a=\"1", "unterminated"),
            ("x{a=\"1\"", "expected ',' or"),
            ("x{a=1} 2", "expected '\"'"),
            ("x{a=\"1\" b=\"2\"} 3", "expected ','"),
            ("x", "missing value"),
            ("x one", "bad value"),
            ("x 1 2 3", "trailing"),
            ("9x 1", "metric name"),
            ("x{a=\"\\t\"} 1", "bad escape"),
        ] {
            let err = Exposition::parse(&format!("# ok\n{bad}\n")).unwrap_err();
            assert_eq!(err.line, 2, "{bad}");
            assert!(err.msg.contains(what), "{bad}: {}", err.msg);
        }
    }
}
