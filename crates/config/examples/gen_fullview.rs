//! `cargo run -p config --release --example gen_fullview -- PREFIXES.txt[.gz] NH[,NH...] > routes.yaml`
//!
//! Writes a full-view routes file (compact form) from a prefix list, spreading prefixes
//! over the given next hops. `.gz` input is decompressed.
use std::io::Read;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(input), Some(nhs)) = (args.next(), args.next()) else {
        eprintln!("usage: gen_fullview PREFIXES.txt[.gz] NEXTHOP[,NEXTHOP...]");
        std::process::exit(2);
    };
    let nhs: Vec<std::net::Ipv4Addr> = nhs
        .split(',')
        .map(|s| s.parse().expect("next hop must be an IPv4 address"))
        .collect();
    let f = std::fs::File::open(&input).expect("cannot open the prefix list");
    let mut text = String::new();
    if input.ends_with(".gz") {
        flate2::read::GzDecoder::new(f).read_to_string(&mut text)
    } else {
        std::io::BufReader::new(f).read_to_string(&mut text)
    }
    .expect("cannot read the prefix list");
    let (out, n) = config::generate::fullview_routes(&text, &nhs);
    print!("{out}");
    eprintln!("{n} routes");
}
