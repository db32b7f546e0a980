//! How much memory the engine may still take: the least of the machine's
//! available memory (`MemAvailable` in /proc/meminfo) and what the
//! process's memory cgroup still allows (cgroup v2 `memory.max`, v1
//! `memory.limit_in_bytes`, on the process's own group and every group
//! above it). Inside a container the machine may have room that the
//! container's limit does not: an allocation beyond that limit succeeds and
//! its pages later get the process killed.
//!
//! The parsing takes file contents, so that the tests can give it sample
//! files; [`available_bytes`] reads the real ones.

use std::path::{Path, PathBuf};

/// The memory this process can still take, in bytes; `None` where nothing
/// says (no /proc).
pub fn available_bytes() -> Option<u64> {
    available_with(&|path| std::fs::read_to_string(path).ok())
}

/// [`available_bytes`] with `read` giving the contents of a file.
fn available_with(read: &dyn Fn(&Path) -> Option<String>) -> Option<u64> {
    let machine = read(Path::new("/proc/meminfo")).and_then(|t| mem_available(&t));
    let group = cgroup_available(read);
    match (machine, group) {
        (Some(m), Some(g)) => Some(m.min(g)),
        (m, g) => m.or(g),
    }
}

/// `MemAvailable` of /proc/meminfo, in bytes.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The cgroup version of a memory hierarchy, with its file names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

impl Version {
    fn limit_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        }
    }
    fn usage_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.usage_in_bytes",
            Version::V2 => "memory.current",
        }
    }
    /// The page cache the kernel drops before it kills: counted in the
    /// usage but not taken.
    fn reclaimable_key(self) -> &'static str {
        match self {
            Version::V1 => "total_inactive_file",
            Version::V2 => "inactive_file",
        }
    }
}

/// The process's memory cgroup from /proc/self/cgroup: the v1 line whose
/// controllers include `memory`, else the v2 line (`0::/path`).
pub fn own_group(proc_self_cgroup: &str) -> Option<(Version, String)> {
    let mut v2 = None;
    for line in proc_self_cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == "memory") {
            return Some((Version::V1, path.to_string()));
        }
        if id == "0" && controllers.is_empty() {
            v2 = Some((Version::V2, path.to_string()));
        }
    }
    v2
}

/// Where the hierarchy of `version` is mounted, from /proc/self/mountinfo:
/// the mount point and the group its root is (in a container, the
/// container's own group is often mounted as the root).
pub fn mount(mountinfo: &str, version: Version) -> Option<(PathBuf, String)> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let before: Vec<&str> = before.split(' ').collect();
        let mut after = after.split(' ');
        let fstype = after.next()?;
        let super_options = after.nth(1).unwrap_or("");
        let fits = match version {
            Version::V2 => fstype == "cgroup2",
            Version::V1 => fstype == "cgroup" && super_options.split(',').any(|o| o == "memory"),
        };
        let (root, point) = (before.get(3)?, before.get(4)?);
        fits.then(|| (PathBuf::from(unescape(point)), unescape(root)))
    })
}

/// mountinfo writes a space, tab, newline and backslash as octal escapes.
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// A limit or usage file's number; `max` (v2, no limit) and anything else
/// that is not a number are `None`.
pub fn bytes_value(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The value of `key` in a memory.stat file.
pub fn stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        if k == key {
            v.trim().parse().ok()
        } else {
            None
        }
    })
}

/// What the process's memory cgroup still allows, in bytes: over the
/// group and every group above it within the mount, the least of its limit
/// less its usage (page cache the kernel would drop not counted). `None`
/// where no group sets a limit or none can be read.
fn cgroup_available(read: &dyn Fn(&Path) -> Option<String>) -> Option<u64> {
    let (version, group) = own_group(&read(Path::new("/proc/self/cgroup"))?)?;
    let (point, root) = mount(&read(Path::new("/proc/self/mountinfo"))?, version)?;
    // The group's path below the mount point: the mounted root is a prefix
    // of it, unless the process is outside that root (then the mount
    // point's own files are the nearest the process can see).
    let below = group
        .strip_prefix(root.trim_end_matches('/'))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        .unwrap_or("");
    let mut dir = point.clone();
    dir.extend(below.split('/').filter(|part| !part.is_empty()));
    let mut least: Option<u64> = None;
    loop {
        if let Some(limit) = read(&dir.join(version.limit_file())).and_then(|t| bytes_value(&t)) {
            let usage = read(&dir.join(version.usage_file()))
                .and_then(|t| bytes_value(&t))
                .unwrap_or(0);
            let reclaimable = read(&dir.join("memory.stat"))
                .and_then(|t| stat_value(&t, version.reclaimable_key()))
                .unwrap_or(0);
            let taken = usage.saturating_sub(reclaimable);
            let left = limit.saturating_sub(taken);
            least = Some(least.map_or(left, |l| l.min(left)));
        }
        if dir == point || !dir.pop() || !dir.starts_with(&point) {
            break;
        }
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const MEMINFO: &str = "MemTotal:       65843064 kB\n\
                           MemFree:         1234567 kB\n\
                           MemAvailable:   33554432 kB\n\
                           Buffers:          123456 kB\n";

    /// Files as a test gives them.
    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let map: HashMap<PathBuf, String> = entries
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        move |path: &Path| map.get(path).cloned()
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn meminfo_available() {
        assert_eq!(mem_available(MEMINFO), Some(32 * GIB));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots kB\n"), None);
    }

    #[test]
    fn own_group_v1_and_v2() {
        // cgroup v2 only (a Docker container with its own cgroup namespace).
        assert_eq!(own_group("0::/\n"), Some((Version::V2, "/".to_string())));
        // v1: the memory controller's line, wherever it is and whatever
        // shares it.
        let v1 = "12:pids:/docker/abc\n\
                  9:memory:/docker/abc\n\
                  4:cpu,cpuacct:/docker/abc\n\
                  1:name=systemd:/docker/abc\n\
                  0::/system.slice/docker.service\n";
        assert_eq!(
            own_group(v1),
            Some((Version::V1, "/docker/abc".to_string()))
        );
        assert_eq!(
            own_group("5:cpuset,memory:/a:b\n"),
            Some((Version::V1, "/a:b".to_string()))
        );
        assert_eq!(own_group("3:cpu:/x\n"), None);
        assert_eq!(own_group(""), None);
    }

    #[test]
    fn mounts_of_each_version() {
        let info = "24 30 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n\
                    35 24 0:30 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n\
                    40 35 0:35 /docker/abc /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n\
                    41 35 0:36 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n\
                    29 24 0:26 / /sys/fs/cgroup/unified\\040x rw - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            mount(info, Version::V1),
            Some((
                PathBuf::from("/sys/fs/cgroup/memory"),
                "/docker/abc".to_string()
            ))
        );
        assert_eq!(
            mount(info, Version::V2),
            Some((PathBuf::from("/sys/fs/cgroup/unified x"), "/".to_string()))
        );
        assert_eq!(mount("", Version::V2), None);
    }

    #[test]
    fn limit_files() {
        assert_eq!(bytes_value("max\n"), None);
        assert_eq!(bytes_value("536870912\n"), Some(512 << 20));
        let stat = "anon 1000\nfile 5000\ninactive_file 3000\nactive_file 2000\n";
        assert_eq!(stat_value(stat, "inactive_file"), Some(3000));
        assert_eq!(stat_value(stat, "file"), Some(5000));
        assert_eq!(stat_value(stat, "shmem"), None);
    }

    const V2_MOUNTINFO: &str =
        "29 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";

    /// A container of 2 GiB on a machine with 32 GiB available: 2 GiB less
    /// what the group holds (page cache it can drop not counted).
    #[test]
    fn a_v2_container_limit_is_smaller_than_the_machine() {
        let read = files(&[
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/cgroup", "0::/\n"),
            ("/proc/self/mountinfo", V2_MOUNTINFO),
            ("/sys/fs/cgroup/memory.max", "2147483648\n"),
            ("/sys/fs/cgroup/memory.current", "536870912\n"),
            (
                "/sys/fs/cgroup/memory.stat",
                "anon 100\ninactive_file 268435456\n",
            ),
        ]);
        assert_eq!(available_with(&read), Some(2 * GIB - (256 << 20)));
    }

    /// No limit (`max`) on the group: the machine's figure.
    #[test]
    fn no_limit_leaves_the_machine_figure() {
        let read = files(&[
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/cgroup", "0::/user.slice/session-1.scope\n"),
            ("/proc/self/mountinfo", V2_MOUNTINFO),
            (
                "/sys/fs/cgroup/user.slice/session-1.scope/memory.max",
                "max\n",
            ),
            ("/sys/fs/cgroup/user.slice/memory.max", "max\n"),
        ]);
        assert_eq!(available_with(&read), Some(32 * GIB));
    }

    /// A limit on a group above the process's own counts too (systemd
    /// puts the limit on the slice).
    #[test]
    fn a_parent_groups_limit_counts() {
        let read = files(&[
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/cgroup", "0::/engines.slice/qilin.scope\n"),
            ("/proc/self/mountinfo", V2_MOUNTINFO),
            (
                "/sys/fs/cgroup/engines.slice/qilin.scope/memory.max",
                "max\n",
            ),
            (
                "/sys/fs/cgroup/engines.slice/qilin.scope/memory.current",
                "1000\n",
            ),
            ("/sys/fs/cgroup/engines.slice/memory.max", "1073741824\n"),
            ("/sys/fs/cgroup/engines.slice/memory.current", "73741824\n"),
        ]);
        assert_eq!(available_with(&read), Some(1_000_000_000));
    }

    /// cgroup v1 with the container's group mounted as the root of the
    /// memory hierarchy (Docker without a cgroup namespace): the files at
    /// the mount point are the container's.
    #[test]
    fn a_v1_container_limit() {
        let read = files(&[
            ("/proc/meminfo", MEMINFO),
            (
                "/proc/self/cgroup",
                "9:memory:/docker/abc\n1:name=systemd:/docker/abc\n",
            ),
            (
                "/proc/self/mountinfo",
                "40 35 0:35 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "4294967296\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.usage_in_bytes",
                "1073741824\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.stat",
                "cache 5\ntotal_inactive_file 0\n",
            ),
        ]);
        assert_eq!(available_with(&read), Some(3 * GIB));
        // Without the container (no cgroup files): the machine's figure.
        let bare = files(&[("/proc/meminfo", MEMINFO)]);
        assert_eq!(available_with(&bare), Some(32 * GIB));
        // v1's "no limit" is a huge number: the machine's figure is smaller.
        let unlimited = files(&[
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/cgroup", "9:memory:/\n"),
            (
                "/proc/self/mountinfo",
                "40 35 0:35 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712\n",
            ),
        ]);
        assert_eq!(available_with(&unlimited), Some(32 * GIB));
    }
}
