//! One module per subcommand; each returns the process exit code.

pub mod bench_lookup;
pub mod check;
pub mod gen_traffic;
pub mod generate;
pub mod prefix_file;
pub mod run;
pub mod stats;
