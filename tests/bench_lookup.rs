//! `mplsrouter bench-lookup` says which pages each lookup structure sits on, and puts
//! rte_lpm on hugepages exactly when enough are free. The oracle for "enough free" is
//! sysfs, read here independently; the page sizes come from the kernel (smaps) in the
//! binary. Timings are printed by the command but never asserted.

mod common;

use std::process::Command;

use common::{bin, TempDir};

/// Free hugepage bytes over every size (sysfs), as the kernel reports them.
fn free_huge_bytes() -> u64 {
    let Ok(rd) = std::fs::read_dir("/sys/kernel/mm/hugepages") else {
        return 0;
    };
    rd.filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().into_string().unwrap();
            let kb: u64 = name["hugepages-".len()..name.len() - 2].parse().unwrap();
            let free: u64 = std::fs::read_to_string(e.path().join("free_hugepages"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            kb * 1024 * free
        })
        .sum()
}

#[test]
fn bench_lookup_reports_the_pages_of_every_structure() {
    let dir = TempDir::new("bench-lookup");
    let routes = dir.path("prefixes.txt");
    // 2,000 prefixes: /16s, /24s and some /28s (rte_lpm tbl8 groups).
    let mut text = String::new();
    for i in 0..2000u32 {
        let len = [16, 24, 28][i as usize % 3];
        let addr = (0x0a00_0000 + (i << 12)) & (u32::MAX << (32 - len));
        text += &format!("{}/{len}\n", std::net::Ipv4Addr::from(addr));
    }
    std::fs::write(&routes, text).unwrap();
    let huge_before = free_huge_bytes() >= 160 << 20;
    let out = Command::new(bin())
        .arg("bench-lookup")
        .arg("--routes")
        .arg(&routes)
        .args(["--count", "4096", "--seconds", "0.01"])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{s}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The slow build is announced before the wait, on stderr (stdout is the report).
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Lpm4 built in") && err.contains("building rte_lpm"),
        "{err}"
    );
    let pages: Vec<&str> = s.lines().filter(|l| l.starts_with("pages:")).collect();
    let names: Vec<String> = pages
        .iter()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        names,
        [
            "pages: Lpm4 top",
            "pages: Lpm4 arena",
            "pages: rte_lpm tbl24",
            "pages: rte_lpm tbl8"
        ],
        "{s}"
    );
    for l in &pages {
        assert!(l.contains(" KiB") && l.contains("MiB resident"), "{l}");
    }
    // rte_lpm is on the EAL's hugepages iff enough were free when it started (the count
    // may move between the two reads only if another process takes or frees pages).
    let rte_huge = pages[2..].iter().all(|l| l.contains("hugetlb pages"));
    let rte_plain = pages[2..].iter().all(|l| l.contains(" 4 KiB pages"));
    assert!(rte_huge != rte_plain, "{s}");
    assert_eq!(rte_huge, huge_before, "{s}");
    assert_eq!(
        s.contains("rte_lpm memory: EAL hugepages"),
        rte_huge,
        "the announced memory must be the one reported:\n{s}"
    );
    // Our Lpm4 is anonymous memory: base pages, possibly THP-backed.
    assert!(pages[..2].iter().all(|l| l.contains(" 4 KiB pages")), "{s}");
    // The batch's form follows the CPU's flags as the kernel lists them.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let flags: Vec<&str> = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    let wide = flags.contains(&"avx512f") && flags.contains(&"avx512_vpopcntdq");
    let want = if wide {
        "batched lookups: AVX-512 (sixteen keys a gather)"
    } else {
        "batched lookups: scalar"
    };
    assert!(s.lines().any(|l| l == want), "want {want:?}:\n{s}");
}
