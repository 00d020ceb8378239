//! Helpers shared by the memory tests (each a test file of its own, so no other test shares its process).

/// The process's resident memory in bytes.
pub fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// [`resident_bytes`] once the allocator has handed back what it holds free: threads leave freed memory in their
/// own allocator arenas, which glibc returns only on request.
#[allow(dead_code)]
pub fn trimmed_resident_bytes() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    resident_bytes()
}
