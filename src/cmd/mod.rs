//! One module per subcommand; each returns the process exit code.

pub mod bench_lookup;
pub mod bench_lookup6;
pub mod capture;
pub mod check;
pub mod ctl;
pub mod gen_traffic;
pub mod generate;
pub mod lookup;
pub mod pages;
pub mod prefix_file;
pub mod run;
pub mod show;
pub mod stats;
pub mod trace;
