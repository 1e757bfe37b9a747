//! The source book FPM keeps for `show routes --source fpm`: a key is FPM's while FPM's
//! entry is the one in the table (not overridden by the routes file, not withdrawn).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use fpm::{Change, Hop, Key, Target};

use super::FpmControl;
use crate::ctlsock::SourceBook;
use crate::learned::Learned;

#[test]
fn the_book_names_what_fpm_installed_and_nothing_else() {
    let cfg = config::StartupConfig::parse(
        Path::new("/x/r.yaml"),
        "ports:\n  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24]}\n  \
         - {name: out, vdev: net_null1, addresses: [10.0.1.1/24]}\n",
    )
    .unwrap();
    let ctx = config::RouteContext::from_startup(&cfg, |id| [2, 0, 0, 0, id as u8, 1]);
    let ports = ctx.ports.clone().unwrap();
    let file = "ipv4:\n  - {prefix: 198.51.100.0/24, via: 10.0.1.2}\n";
    let set = config::parse_routes(Path::new("/x/routes.yaml"), file, &ctx).unwrap();
    let fib = config::compile(&set, &ports, 1).unwrap();

    let mut f = FpmControl::new(Duration::ZERO, ports, Arc::default());
    let book = Arc::new(SourceBook::default());
    f.set_book(book.clone());
    f.set_file_view(&fib, &set.neighbors, &set.neighbors6);
    let hop = Hop {
        port: 1,
        via: fpm::msg::Gateway::V4(0x0a00_0102),
        labels: vec![100],
        weight: 1,
    };
    let ours = Key::Ipv4 {
        addr: 0xcb00_7100,
        len: 24,
    };
    let files = Key::Ipv4 {
        addr: 0xc633_6400,
        len: 24,
    };
    let fwd = Some(Arc::new(Target::Forward(vec![hop])));
    let mut delta = fib.derive();
    let learned = Learned::default();
    let changes = [
        Change {
            key: ours,
            target: fwd.clone(),
        },
        Change {
            key: files,
            target: fwd.clone(),
        },
    ];
    f.apply(&mut delta, &changes, &learned);
    assert!(book.is_fpm(ours));
    assert!(!book.is_fpm(files), "the routes file overrides FPM there");

    // A reload re-applies every FPM route: the book follows.
    book.set_fpm(files, true);
    f.reapply_all(&mut fib.derive(), &learned);
    assert!(book.is_fpm(ours) && !book.is_fpm(files));

    f.apply(
        &mut delta,
        &[Change {
            key: ours,
            target: None,
        }],
        &learned,
    );
    assert!(!book.is_fpm(ours), "withdrawn");
}
