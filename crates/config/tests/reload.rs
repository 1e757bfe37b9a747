//! Reload: a bad file leaves the last good state; a storm of edits ends on the last one.
#![forbid(unsafe_code)]

mod common;

use common::ctx;
use std::path::PathBuf;

use config::{ReloadOutcome, ReloadState};
use net::fib::{Fib, NextHop, RouteTarget};

/// Next hop of `dst`'s route (last octet of the neighbor), if it has a single one.
fn via(fib: &Fib, dst: u32) -> Option<u8> {
    match fib.route(fib.lookup_ipv4(dst)?).target {
        RouteTarget::NextHop(NextHop::Adjacency(a)) => Some(fib.adjacency(a).neighbor[3]),
        _ => None,
    }
}

fn routes(n: u32, nh: u8) -> String {
    let mut s = String::from("routes_compact:\n");
    for i in 0..n {
        s += &format!("  - 20.{}.{}.0/24 via 10.0.1.{nh}\n", i >> 8, i & 255);
    }
    s
}

fn updated(o: ReloadOutcome) -> (Fib, config::RouteDiff) {
    match o {
        ReloadOutcome::Updated { fib, diff, .. } => (*fib, diff),
        ReloadOutcome::Unchanged { .. } => panic!("expected a new table"),
    }
}

#[test]
fn bad_file_leaves_the_old_state() {
    let mut st = ReloadState::new("/x/routes.yaml", ctx());
    let (fib, diff) = updated(st.apply_text(routes(10, 2)).unwrap());
    assert_eq!(fib.generation(), 1);
    assert_eq!(diff.ipv4_added, 10);
    assert_eq!(via(&fib, 0x14000005), Some(2));
    let before = st.current().cloned();

    let bad = routes(10, 3).replace("20.0.4.0/24", "20.0.4.1/24");
    let e = st.apply_text(bad).unwrap_err();
    let d = e.diagnostics().unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!((d.0[0].line, d.0[0].col), (6, 5));
    assert!(d.0[0].message.contains("host bits"));
    assert_eq!(st.generation(), 1);
    assert_eq!(st.current().cloned(), before);

    // A comment-only edit yields no new table; a real edit is generation 2.
    assert!(matches!(
        st.apply_text(routes(10, 2) + "# comment\n").unwrap(),
        ReloadOutcome::Unchanged { .. }
    ));
    assert_eq!(st.generation(), 1);
    let (fib, diff) = updated(st.apply_text(routes(11, 3)).unwrap());
    assert_eq!(fib.generation(), 2);
    assert_eq!(
        (diff.ipv4_added, diff.ipv4_changed, diff.ipv4_removed),
        (1, 10, 0)
    );
    assert_eq!(via(&fib, 0x14000a05), Some(3));
}

#[test]
fn reload_storm_ends_on_the_last_content() {
    let dir: PathBuf = std::env::temp_dir().join(format!("config-storm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("routes.yaml");
    let mut st = ReloadState::new(&path, ctx());
    let mut last_good = None;
    let mut generations = 0;
    for i in 0..300u32 {
        // Editors write by rename: write a temp file, then move it over the original.
        let nh = 2 + (i % 200) as u8;
        let text = if i % 7 == 3 {
            format!("{}  - bogus line {i}\n", routes(50, nh))
        } else {
            format!("{}  - 30.0.0.0/8 via 10.0.0.{nh}\n", routes(50 + i % 5, nh))
        };
        let tmp = dir.join(".routes.yaml.tmp");
        std::fs::write(&tmp, &text).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        match st.reload() {
            Ok(ReloadOutcome::Updated { fib, .. }) => {
                generations += 1;
                assert_eq!(fib.generation(), generations);
                last_good = Some((i, nh, fib));
            }
            Ok(ReloadOutcome::Unchanged { .. }) => panic!("every good write differs"),
            Err(_) => assert!(i % 7 == 3, "write {i} was valid"),
        }
    }
    let (i, nh, fib) = last_good.unwrap();
    assert_eq!(i, 299);
    assert_eq!(st.generation(), generations);
    assert_eq!(fib.stats().ipv4_routes, 4 + 50 + 299 % 5 + 1);
    // The last write had 54 routes 20.0.0.0/24..20.0.53.0/24 via 10.0.1.101.
    assert_eq!(nh, 101);
    assert_eq!(via(&fib, 0x14003501), Some(nh));
    assert_eq!(via(&fib, 0x14003601), None);
    assert_eq!(via(&fib, 0x14000001), Some(nh));
    assert_eq!(via(&fib, 0x1e010203), Some(nh));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The fast path (edits inside `routes_compact`) must give exactly what a full parse of
/// the same text gives, or fall back; checked over a long run of random edits.
#[test]
fn fast_path_agrees_with_a_full_parse() {
    let ctx = ctx();
    let normal = |s: &config::RouteSet| -> Vec<(String, config::routes::RouteSpec)> {
        s.ipv4
            .iter()
            .map(|(c, id)| (c.to_string(), s.specs[*id as usize].clone()))
            .collect()
    };
    let header = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\nipv4:\n  - {prefix: 9.9.0.0/16, via: 10.0.0.2}\n  - {prefix: 9.8.0.0/16, blackhole: true}\nroutes_compact:\n";
    let footer = "prefix_groups:\n  - via: 10.0.0.3\n    prefixes: [8.0.0.0/8]\n";
    let mut lines: Vec<String> = (0..200)
        .map(|i| format!("  - 20.0.{i}.0/24 via 10.0.1.{}", 2 + i % 3))
        .collect();
    let text = |lines: &[String]| format!("{header}{}\n{footer}", lines.join("\n"));
    let mut st = ReloadState::new("/x/routes.yaml", ctx.clone());
    st.apply_text(text(&lines)).unwrap();
    let mut seed = 0x2545_f491_u64;
    let mut rnd = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    let (mut fast, mut refused) = (0, 0);
    let mut next_prefix = 1000;
    for step in 0..400 {
        let mut cand = lines.clone();
        let k = rnd(cand.len());
        match rnd(9) {
            0 | 1 => cand[k] = cand[k].replace("via 10.0.1.", "via 10.0.0."),
            2 => {
                cand.remove(k);
            }
            3 | 4 => {
                next_prefix += 1;
                let l = format!(
                    "  - 21.{}.{}.0/24 via 10.0.1.7 push 100",
                    next_prefix >> 8 & 255,
                    next_prefix & 255
                );
                cand.insert(k, l);
            }
            5 => {
                let dup = cand[rnd(cand.len())].clone();
                cand.insert(k, dup);
            }
            6 => cand[k] = "  - 22.0.0.1/24 via 10.0.1.2".into(),
            7 => cand.insert(k, "  # a comment".into()),
            _ => {
                if k + 1 < cand.len() {
                    cand[k] = cand[k]
                        .replace(" via ", " blackhole # ")
                        .split(" # ")
                        .next()
                        .unwrap()
                        .to_string();
                    cand[k + 1] = format!("{} ttl pipe 9", cand[k + 1]);
                }
            }
        }
        let t = text(&cand);
        let oracle = config::parse_routes(std::path::Path::new("/x/routes.yaml"), &t, &ctx);
        let before = st.current().cloned();
        match (st.apply_text(t), oracle) {
            (Ok(out), Ok(o)) => {
                let (ReloadOutcome::Updated { timings, .. } | ReloadOutcome::Unchanged { timings }) =
                    &out;
                fast += usize::from(timings.fast_path);
                assert_eq!(normal(st.current().unwrap()), normal(&o), "step {step}");
                // Comments are not routes; later candidates drop them (an edit too).
                lines = cand.into_iter().filter(|l| !l.contains('#')).collect();
                assert_eq!(lines.len(), o.ipv4.len() - 3);
            }
            (Err(_), Err(_)) => {
                refused += 1;
                assert_eq!(st.current().cloned(), before, "step {step}");
            }
            (a, b) => panic!("step {step}: fast {:?} vs full {:?}", a.is_ok(), b.is_ok()),
        }
    }
    eprintln!("fast path {fast} times, {refused} refused");
    assert!(fast > 100, "fast path taken only {fast} times");
    assert!(refused > 20, "{refused}");
}

/// A set patched by the fast path differs in form from a full parse of the same file
/// (targets appended, not renumbered); a later edit that routes alike must still give no
/// new table. So must a pure reorder.
#[test]
fn edits_that_route_alike_publish_nothing() {
    let mut st = ReloadState::new("/x/routes.yaml", ctx());
    let a = routes(10, 2).replace("20.0.4.0/24 via 10.0.1.2", "20.0.4.0/24 via 10.0.1.3");
    updated(st.apply_text(a).unwrap());
    // The only route via .3 retargeted: the fast path patches the running set, whose
    // target list keeps the unused "via .3" (a full parse of the same text has one target).
    let b = routes(10, 2);
    let (fib, diff) = updated(st.apply_text(b.clone()).unwrap());
    assert_eq!((fib.generation(), diff.ipv4_changed), (2, 1));
    // A comment above the block: a full parse, which routes exactly as before.
    let commented = format!("# comment\n{b}");
    assert!(matches!(
        st.apply_text(commented.clone()).unwrap(),
        ReloadOutcome::Unchanged { .. }
    ));
    assert_eq!(st.generation(), 2);
    // Two lines swapped: the same routes in another order.
    let mut lines: Vec<&str> = commented.lines().collect();
    lines.swap(3, 4);
    let reordered = lines.join("\n") + "\n";
    assert!(matches!(
        st.apply_text(reordered).unwrap(),
        ReloadOutcome::Unchanged { .. }
    ));
    assert_eq!(st.generation(), 2);
    // And a real change after them is still applied.
    let (fib, _) = updated(st.apply_text(routes(10, 3)).unwrap());
    assert_eq!(fib.generation(), 3);
    assert_eq!(via(&fib, 0x14000405), Some(3));
    assert_eq!(via(&fib, 0x14000905), Some(3));
}
