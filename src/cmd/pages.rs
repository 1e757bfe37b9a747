//! Which pages back a structure: read from the kernel's own account
//! (`/proc/self/smaps`), for `bench-lookup`, whose figures depend on it (a 64 MiB tbl24
//! on 4 KiB pages pays a page walk per lookup that 2 MiB pages do not).
//!
//! Also how much hugepage memory is free (every size in sysfs), to decide whether the
//! EAL gets hugepages. Parsing is pure and tested on text; nothing here changes memory.

use std::path::Path;

/// The pages behind one address range, summed over the mappings it overlaps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageUse {
    /// Largest `KernelPageSize` among the mappings (bytes); 0 when none was found.
    pub page_bytes: u64,
    /// Whether a mapping is hugetlbfs (the EAL's hugepages), not anonymous memory.
    pub hugetlb: bool,
    /// Resident bytes on transparent hugepages (`AnonHugePages`).
    pub thp_bytes: u64,
    /// Resident bytes (`Rss`, plus the hugetlb counters for hugetlbfs mappings).
    pub resident_bytes: u64,
    /// Mappings overlapped.
    pub mappings: usize,
}

/// `smaps` header line: `start-end perms ...`, the range in hex.
fn range_of(line: &str) -> Option<(u64, u64)> {
    let r = line.split_whitespace().next()?;
    let (a, b) = r.split_once('-')?;
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

/// `Key:   123 kB` -> bytes.
fn kb_field(line: &str, key: &str) -> Option<u64> {
    let rest = line.strip_prefix(key)?.strip_prefix(':')?;
    let mut it = rest.split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    (it.next() == Some("kB")).then_some(n * 1024)
}

/// The pages of `[addr, addr + len)` according to `smaps` (the text of a smaps file).
pub fn page_use(smaps: &str, addr: usize, len: usize) -> PageUse {
    let (lo, hi) = (addr as u64, (addr + len.max(1)) as u64);
    let mut u = PageUse::default();
    let mut inside = false;
    for line in smaps.lines() {
        // A mapping's header starts with its range; its fields start with `Name:`.
        if let Some((a, b)) = range_of(line) {
            inside = a < hi && lo < b;
            u.mappings += usize::from(inside);
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(v) = kb_field(line, "KernelPageSize") {
            u.page_bytes = u.page_bytes.max(v);
        } else if let Some(v) = kb_field(line, "AnonHugePages") {
            u.thp_bytes += v;
        } else if let Some(v) = kb_field(line, "Rss") {
            u.resident_bytes += v;
        } else if let Some(v) =
            kb_field(line, "Shared_Hugetlb").or_else(|| kb_field(line, "Private_Hugetlb"))
        {
            u.resident_bytes += v;
        }
    }
    // Anonymous memory (THP included) reports base pages; only hugetlbfs reports more.
    u.hugetlb = u.page_bytes > 4096;
    u
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// One line: which pages back the structure, e.g. `2048 KiB hugetlb pages; mapping:
/// 64.0 MiB resident` or `4 KiB pages; mapping: 3.0 MiB resident, 2.0 MiB of it on
/// 2 MiB THP`.
pub fn describe(u: &PageUse) -> String {
    if u.mappings == 0 {
        return "no mapping found".into();
    }
    let kind = if u.hugetlb { " hugetlb" } else { "" };
    let mut s = format!("{} KiB{kind} pages", u.page_bytes / 1024);
    // smaps counts per mapping, and the kernel merges neighbouring anonymous mappings:
    // the figures are the mapping's (or mappings'), not the structure's alone.
    s += &format!("; mapping: {:.1} MiB resident", mib(u.resident_bytes));
    if !u.hugetlb {
        s += &format!(", {:.1} MiB of it on 2 MiB THP", mib(u.thp_bytes));
    }
    s
}

/// The pages of `[addr, addr + len)` in this process, described.
pub fn describe_own(addr: usize, len: usize) -> String {
    match std::fs::read_to_string("/proc/self/smaps") {
        Ok(s) => describe(&page_use(&s, addr, len)),
        Err(e) => format!("unknown (/proc/self/smaps: {e})"),
    }
}

/// Free hugepage memory over every page size under `dir`
/// (`/sys/kernel/mm/hugepages`: `hugepages-<kB>kB/free_hugepages`), in bytes.
pub fn free_huge_bytes(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let kb: u64 = name
                .strip_prefix("hugepages-")?
                .strip_suffix("kB")?
                .parse()
                .ok()?;
            let free: u64 = std::fs::read_to_string(e.path().join("free_hugepages"))
                .ok()?
                .trim()
                .parse()
                .ok()?;
            Some(kb * 1024 * free)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
KernelPageSize:        4 kB
MMUPageSize:           4 kB
Rss:                3072 kB
AnonHugePages:      2048 kB
Private_Hugetlb:       0 kB
VmFlags: rd wr mr mw me ac hg
7f0000400000-7f0004400000 rw-s 00000000 00:0f 1234                       /anon_hugepage (deleted)
Size:              65536 kB
KernelPageSize:     2048 kB
MMUPageSize:        2048 kB
Rss:                   0 kB
AnonHugePages:         0 kB
Shared_Hugetlb:        0 kB
Private_Hugetlb:   65536 kB
VmFlags: rd wr sh mr mw me ms de ht
7fff00000000-7fff00001000 r--p 00000000 08:01 99                          /usr/lib/libx.so
Size:                  4 kB
KernelPageSize:        4 kB
Rss:                   4 kB
";

    #[test]
    fn anonymous_mapping_with_thp() {
        let u = page_use(SMAPS, 0x7f00_0010_0000, 0x1000);
        assert_eq!(u.mappings, 1);
        assert_eq!(u.page_bytes, 4096);
        assert!(!u.hugetlb);
        assert_eq!(u.thp_bytes, 2 << 20);
        assert_eq!(u.resident_bytes, 3 << 20);
        assert_eq!(
            describe(&u),
            "4 KiB pages; mapping: 3.0 MiB resident, 2.0 MiB of it on 2 MiB THP"
        );
    }

    #[test]
    fn hugetlb_mapping() {
        let u = page_use(SMAPS, 0x7f00_0040_0000, 64 << 20);
        assert_eq!((u.mappings, u.page_bytes, u.hugetlb), (1, 2 << 20, true));
        assert_eq!(u.resident_bytes, 64 << 20);
        assert_eq!(
            describe(&u),
            "2048 KiB hugetlb pages; mapping: 64.0 MiB resident"
        );
    }

    #[test]
    fn a_range_over_two_mappings_takes_the_larger_page() {
        let u = page_use(SMAPS, 0x7f00_003f_f000, 0x2000);
        assert_eq!((u.mappings, u.page_bytes, u.hugetlb), (2, 2 << 20, true));
    }

    #[test]
    fn no_mapping() {
        let u = page_use(SMAPS, 0x1000, 0x1000);
        assert_eq!(u, PageUse::default());
        assert_eq!(describe(&u), "no mapping found");
    }

    #[test]
    fn own_heap_is_on_base_pages_and_resident() {
        let v = vec![1u8; 1 << 20];
        let s = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let u = page_use(&s, v.as_ptr() as usize, v.len());
        assert!(u.mappings >= 1, "{u:?}");
        assert_eq!(u.page_bytes, 4096, "{u:?}");
        assert!(u.resident_bytes >= 1 << 20, "{u:?}");
        assert!(describe_own(v.as_ptr() as usize, v.len()).starts_with("4 KiB pages"));
    }

    #[test]
    fn free_hugepages_over_every_size() {
        let d = std::env::temp_dir().join(format!("pages-test-{}", std::process::id()));
        for (name, free) in [("hugepages-2048kB", "3\n"), ("hugepages-1048576kB", "1\n")] {
            std::fs::create_dir_all(d.join(name)).unwrap();
            std::fs::write(d.join(name).join("free_hugepages"), free).unwrap();
        }
        std::fs::create_dir_all(d.join("other")).unwrap();
        assert_eq!(free_huge_bytes(&d), 3 * (2 << 20) + (1 << 30));
        std::fs::remove_dir_all(&d).unwrap();
        assert_eq!(free_huge_bytes(&d), 0);
    }
}
