//! `plexus shell` on a terminal (a pseudo-terminal here), as a person types into it.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// A pseudo-terminal: (the side the user types into and reads from, the side the shell gets as its terminal).
fn pty() -> (File, OwnedFd) {
    let (mut user, mut shell) = (0, 0);
    // SAFETY: openpty writes two new descriptors, owned from here on; no name, settings or size are given.
    let rc = unsafe { libc::openpty(&mut user, &mut shell, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // Not inherited by the shells other tests start: a copy of this terminal open in another process would keep
    // its reader from ever seeing the end.
    for fd in [user, shell] {
        // SAFETY: fcntl on a descriptor just opened here.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors were just opened and nothing else owns them.
    unsafe { (File::from_raw_fd(user), OwnedFd::from_raw_fd(shell)) }
}

/// Runs `plexus shell` on a terminal, types each of `inputs` at once, half a second apart, and returns whether
/// it ended well by itself and what it showed.
fn type_into_shell(inputs: &[&[u8]]) -> (bool, String) {
    type_into_shell_reacting(inputs, None)
}

/// [`type_into_shell`], typing each of `reaction.1` (half a second apart) once the shell has shown `reaction.0`.
type Reaction = (&'static str, &'static [&'static [u8]]);
fn type_into_shell_reacting(inputs: &[&[u8]], reaction: Option<Reaction>) -> (bool, String) {
    // One at a time: between `openpty` and `fcntl` above, a shell started by another test would inherit the
    // terminal.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (mut user, shell) = pty();
    let mut typed = user.try_clone().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_plexus"));
    command
        .args(["shell", "--data"])
        .arg(dir.path().join("db"))
        .env("HOME", dir.path())
        .stdin(Stdio::from(shell.try_clone().unwrap()))
        .stdout(Stdio::from(shell.try_clone().unwrap()))
        .stderr(Stdio::from(shell));
    // SAFETY: only async-signal-safe calls between fork and exec. The terminal becomes the shell's controlling
    // terminal, in a session of its own, so that Ctrl-C typed into it is SIGINT for the shell alone.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    // The terminal's other end, held by the command: closed, so that only the shell holds it.
    drop(command);
    for input in inputs {
        typed.write_all(input).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    // Read until the shell has exited and closed the terminal (a read then fails with EIO). A shell that lost
    // the `:exit` would wait for input for ever: it is stopped after a while, and the test fails.
    let mut reacting = typed.try_clone().unwrap();
    let reader = std::thread::spawn(move || {
        let mut output = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut reaction = reaction;
        while let Ok(n) = user.read(&mut chunk) {
            if n == 0 {
                break;
            }
            output.extend_from_slice(&chunk[..n]);
            if let Some((seen, then)) = reaction {
                if String::from_utf8_lossy(&output).contains(seen) {
                    for input in then {
                        reacting.write_all(input).unwrap();
                        std::thread::sleep(std::time::Duration::from_millis(500));
                    }
                    reaction = None;
                }
            }
        }
        output
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let exited = child.try_wait().unwrap();
    if exited.is_none() {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let output = reader.join().unwrap();
    (exited.is_some_and(|s| s.success()), String::from_utf8_lossy(&output).into_owned())
}

/// Lines typed ahead, before the shell asks for them (all in one write, as a fast typist or a paste without
/// bracketed paste delivers them), are all run in order: the line editor kept only the first line of what it
/// read at once, and dropped the rest without a word.
#[test]
fn lines_typed_ahead_are_all_run() {
    let (ended, output) =
        type_into_shell(&[b"RETURN 'first' AS a;\nRETURN\n  'second' AS b;\nRETURN 'third' AS c;\n:exit\n"]);
    assert!(ended, "the shell did not end at :exit:\n{output}");
    for row in ["| \"first\" |", "| \"second\" |", "| \"third\" |"] {
        assert!(output.contains(row), "{row} missing from:\n{output}");
    }
}

/// A line of bytes that are no UTF-8 is discarded with a word; the session goes on.
#[test]
fn a_line_that_is_not_utf8_is_discarded_not_the_session() {
    let (ended, output) = type_into_shell(&[b"RETURN 'a\xff\xfe';\n", b"RETURN 'after' AS x;\n:exit\n"]);
    assert!(ended, "the shell did not end at :exit:\n{output}");
    assert!(output.contains("not valid UTF-8"), "{output}");
    assert!(output.contains("| \"after\" |"), "{output}");
}

/// Ctrl-C stops a long result while it is shown, and the session goes on (typed after it: the terminal drops
/// what was typed ahead of a Ctrl-C).
#[test]
fn ctrl_c_stops_a_long_result_being_shown() {
    let (ended, output) = type_into_shell_reacting(
        &[b"UNWIND range(1, 300000) AS i RETURN i;\n"],
        Some(("| 1000 ", &[b"\x03", b"RETURN 'after' AS x;\n:exit\n"])),
    );
    assert!(ended, "the shell did not end at :exit:\n{output}");
    assert!(output.contains("Interrupted"), "{}", &output[output.len().saturating_sub(2000)..]);
    assert!(!output.contains("| 300000 |"), "the whole result was shown");
    assert!(output.contains("| \"after\" |"), "{}", &output[output.len().saturating_sub(2000)..]);
}

/// The prompt shows an open transaction as `cypher-shell`'s does (`#` for `>`), and leaving rolls it back.
#[test]
fn the_prompt_shows_an_open_transaction() {
    let (ended, output) = type_into_shell(&[b":begin\n", b"CREATE (:T);\n", b":commit\n", b":begin\n", b":exit\n"]);
    assert!(ended, "the shell did not end at :exit:\n{output}");
    let opened = output.find("plexus# ").expect("a transaction prompt");
    assert!(output[opened..].contains("Committed.") && output.contains("plexus> "), "{output}");
    assert!(output.contains("rolled back"), "{output}");
}
