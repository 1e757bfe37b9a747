//! `udp_rr MODE --key value ...`: a small option parser (no clap: this tool must build
//! in seconds on a loaded box). Unknown modes and options, and values that do not parse,
//! are errors naming the option; nothing is silently defaulted except what is documented.

use std::collections::BTreeMap;

pub const USAGE: &str = "\
udp_rr: UDP request/response latency (netperf UDP_RR shape), IPv4 or IPv6
  (ADDR:PORT is 10.9.0.2:7777 or [2001:db8:9::2]:7777; without --bind, client and
  flood bind the wildcard of their target's family)

  udp_rr server --bind ADDR:PORT [--duration S]
      echo every datagram back to its sender (S = 0: until killed)
  udp_rr client --target ADDR:PORT [--duration S] [--warmup S] [--size BYTES]
                [--timeout-ms MS] [--label NAME] [--json FILE] [--bind ADDR:PORT]
      one transaction outstanding; reports transactions/s and RTT p50/p99/p99.9
      (defaults: duration 10, warmup 1, size 64, timeout-ms 200)
  udp_rr flood --target ADDR:PORT --rate PPS [--duration S] [--size BYTES]
              [--bind ADDR:PORT]
      paced background load, no responses expected
  udp_rr sink --bind ADDR:PORT [--duration S]
      count datagrams received (the flood's far end)";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Server,
    Client,
    Flood,
    Sink,
}

#[derive(Debug, PartialEq)]
pub struct Args {
    pub mode: Mode,
    opts: BTreeMap<String, String>,
}

impl Args {
    /// Parses `argv` without the program name.
    pub fn parse(argv: &[String]) -> Result<Args, String> {
        let (mode, rest) = argv.split_first().ok_or("a mode is needed")?;
        let (mode, allowed): (Mode, &[&str]) = match mode.as_str() {
            "server" => (Mode::Server, &["bind", "duration"]),
            "client" => (
                Mode::Client,
                &[
                    "target",
                    "duration",
                    "warmup",
                    "size",
                    "timeout-ms",
                    "label",
                    "json",
                    "bind",
                ],
            ),
            "flood" => (Mode::Flood, &["target", "rate", "duration", "size", "bind"]),
            "sink" => (Mode::Sink, &["bind", "duration"]),
            m => return Err(format!("unknown mode {m:?}")),
        };
        let mut opts = BTreeMap::new();
        let mut it = rest.iter();
        while let Some(k) = it.next() {
            let key = k
                .strip_prefix("--")
                .filter(|k| allowed.contains(k))
                .ok_or_else(|| format!("unknown option {k:?} for this mode"))?;
            let v = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
            opts.insert(key.to_string(), v.clone());
        }
        Ok(Args { mode, opts })
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.opts.get(key).map(String::as_str)
    }

    pub fn required(&self, key: &str) -> Result<&str, String> {
        self.str(key).ok_or_else(|| format!("--{key} is required"))
    }

    /// A number option, `default` when absent.
    pub fn num<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, String> {
        match self.str(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{key}: {v:?} is not a valid number")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Args, String> {
        let v: Vec<String> = s.split_whitespace().map(String::from).collect();
        Args::parse(&v)
    }

    #[test]
    fn parses_modes_and_numbers() {
        let a = p("client --target 10.0.0.1:7 --duration 2.5 --size 100").unwrap();
        assert_eq!(a.mode, Mode::Client);
        assert_eq!(a.required("target").unwrap(), "10.0.0.1:7");
        assert_eq!(a.num("duration", 10.0).unwrap(), 2.5);
        assert_eq!(a.num("size", 64usize).unwrap(), 100);
        assert_eq!(a.num("warmup", 1.0).unwrap(), 1.0);
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        assert!(p("").unwrap_err().contains("mode"));
        assert!(p("bounce").unwrap_err().contains("unknown mode"));
        assert!(p("server --rate 5").unwrap_err().contains("--rate"));
        assert!(p("client --target").unwrap_err().contains("needs a value"));
        let a = p("client --target [2001:db8:9::2]:7 --bind [2001:db8:1::2]:0").unwrap();
        assert_eq!(a.required("bind").unwrap(), "[2001:db8:1::2]:0");
        assert!(p("flood --target [::1]:9 --rate 5 --bind [::1]:0").is_ok());
        let a = p("flood --rate fast").unwrap();
        assert!(a.num("rate", 0u64).unwrap_err().contains("fast"));
        assert!(a.required("target").unwrap_err().contains("--target"));
    }
}
