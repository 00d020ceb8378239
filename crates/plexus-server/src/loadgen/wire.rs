//! The load generator's measuring loop: each of its threads owns some connections and every `threads`-th request
//! of the schedule, and serves them from one `epoll` set with a `timerfd` that wakes it at the next due time, or
//! [`TICK`] later when requests fall due faster than that (each wake-up then sends all that fell due; their
//! latencies count from their due times all the same).
//!
//! Why not the async runtime the connections were opened with: a pacing thread handing each request to a runtime
//! thread through a semaphore cost several wake-ups per request. The generator spent about 70 µs of CPU on each IS1
//! request against the server's 50, on a machine both share, and the server's share grew with it, since waking a
//! sleeping client is charged to the server's `send`. With one thread that sends, waits and reads itself, the
//! generator spends about half that and the server a fifth less. Linux only, like the server's measurements.

use std::collections::VecDeque;
use std::io::Write;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use super::client::{failure_text, RequestError};
use super::{Sample, Worker};
use crate::bolt::connection::MessageScan;
use crate::packstream::decode;

/// The shortest wait for the next due request. A wake-up per request (every 100 µs at 10,000/s) took a third more
/// of the generator's CPU, and of the server's, than waking at most every 250 µs, which adds at most that to a
/// request's measured latency.
const TICK: Duration = Duration::from_micros(250);

/// What a request's answer says.
type Outcome = Result<usize, RequestError>;

/// A logged-on connection, non-blocking, with what it is waiting for.
pub(super) struct Wire {
    stream: TcpStream,
    protocol: Protocol,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    /// How much of `out` is written.
    written: usize,
    /// The request being answered: its index in the schedule, or `None` when the connection is idle.
    serving: Option<u64>,
}

pub(super) enum Protocol {
    Bolt { scan: MessageScan, step: BoltStep, rows: usize, failure: Option<String> },
    Http,
}

/// Where a Bolt request's answer stands (RUN and PULL were sent together).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum BoltStep {
    Run,
    Records,
    /// The RUN failed: the PULL's IGNORED is next, then the RESET sent after it is answered.
    Ignored,
    Reset,
}

impl Wire {
    /// `stream` is logged on; `leftover` is what was read past the log-on's answer.
    pub(super) fn new(stream: TcpStream, http: bool, leftover: Vec<u8>) -> std::io::Result<Wire> {
        stream.set_nonblocking(true)?;
        let protocol = if http {
            Protocol::Http
        } else {
            Protocol::Bolt { scan: MessageScan::default(), step: BoltStep::Run, rows: 0, failure: None }
        };
        Ok(Wire { stream, protocol, inbuf: leftover, out: Vec::new(), written: 0, serving: None })
    }

    /// Sends request `i`, whose bytes `encode` writes. False when the connection failed.
    fn start(&mut self, i: u64, encode: &mut dyn FnMut(u64, &mut Vec<u8>)) -> bool {
        self.out.clear();
        self.written = 0;
        encode(i, &mut self.out);
        if let Protocol::Bolt { step, rows, failure, .. } = &mut self.protocol {
            (*step, *rows, *failure) = (BoltStep::Run, 0, None);
        }
        self.serving = Some(i);
        self.write_some()
    }

    /// Writes what it can of `out`; false on an error.
    fn write_some(&mut self) -> bool {
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]) {
                Ok(0) => return false,
                Ok(n) => self.written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    fn wants_to_write(&self) -> bool {
        self.written < self.out.len()
    }

    /// Reads what arrived; the answer of the request being served once it is complete. `Err` when the
    /// connection is lost.
    fn on_readable(&mut self) -> Result<Option<Outcome>, RequestError> {
        // One read per readiness: the set is level-triggered, so what does not fit is reported again, and a
        // second read to find the socket empty would cost a system call per answer.
        self.inbuf.reserve(64 * 1024);
        match self.stream.read_buf_into(&mut self.inbuf) {
            Ok(0) => return Err(RequestError("the server closed the connection".into())),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted) => {}
            Err(e) => return Err(RequestError(format!("i/o: {e}"))),
        }
        match &mut self.protocol {
            Protocol::Bolt { .. } => self.bolt_progress(),
            Protocol::Http => match take_http_response(&mut self.inbuf)? {
                None => Ok(None),
                Some((status, body)) => Ok(Some(http_outcome(status, &body))),
            },
        }
    }

    fn bolt_progress(&mut self) -> Result<Option<Outcome>, RequestError> {
        let Protocol::Bolt { scan, step, rows, failure } = &mut self.protocol else { unreachable!("a Bolt wire") };
        while let Some(message) = scan.take(&mut self.inbuf, usize::MAX).map_err(RequestError)? {
            // A message is a structure: its marker, then its tag.
            let tag = message.get(1).copied().unwrap_or(0);
            match (*step, tag) {
                (BoltStep::Run, 0x70) => *step = BoltStep::Records,
                (BoltStep::Records, 0x71) => *rows += 1,
                (BoltStep::Records, 0x70) => return Ok(Some(Ok(*rows))),
                (BoltStep::Run | BoltStep::Records, 0x7F) => {
                    *failure = Some(decode(&message).map_or_else(|e| e.to_string(), |m| failure_text(&m)));
                    // A failed RUN leaves its PULL to be ignored; a failed PULL is the last answer. Either way the
                    // connection needs a RESET before its next request.
                    if *step == BoltStep::Run {
                        *step = BoltStep::Ignored;
                    } else {
                        *step = BoltStep::Reset;
                        return self.send_reset().map(|()| None);
                    }
                }
                (BoltStep::Ignored, 0x7E) => {
                    *step = BoltStep::Reset;
                    return self.send_reset().map(|()| None);
                }
                (BoltStep::Reset, 0x70) => {
                    let why = failure.take().unwrap_or_default();
                    return Ok(Some(Err(RequestError(why))));
                }
                (_, other) => return Err(RequestError(format!("unexpected Bolt message 0x{other:02X}"))),
            }
        }
        Ok(None)
    }
}

impl Wire {
    /// Sends the RESET a failed request leaves the connection needing; what does not fit in the socket now is
    /// sent when it is writable (`wants_to_write`). Nothing else can have arrived before its answer.
    fn send_reset(&mut self) -> Result<(), RequestError> {
        self.out.clear();
        self.written = 0;
        crate::bolt::session::chunk(&[0xB0, 0x0F], &mut self.out);
        if self.write_some() {
            Ok(())
        } else {
            Err(RequestError("the connection failed while sending a RESET".into()))
        }
    }
}

/// `Read::read` into the spare room of a `Vec`, without zeroing it first.
trait ReadBufInto {
    fn read_buf_into(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize>;
}

impl ReadBufInto for TcpStream {
    fn read_buf_into(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        let spare = buf.spare_capacity_mut();
        // SAFETY: `recv` writes at most `spare.len()` bytes into the spare capacity, and only the bytes it reports
        // written are then counted into the length.
        let n = unsafe { libc::recv(self.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len(), 0) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = n as usize;
        // SAFETY: the first `n` bytes of the spare capacity were just written.
        unsafe { buf.set_len(buf.len() + n) };
        Ok(n)
    }
}

/// A whole HTTP/1.1 response off the front of `buf`, if there is one: its status and body.
pub(super) fn take_http_response(buf: &mut Vec<u8>) -> Result<Option<(u16, Vec<u8>)>, RequestError> {
    let Some(header_end) = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4) else {
        return Ok(None);
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_ascii_lowercase();
    let status: u16 = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let length =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse::<usize>().ok());
    let chunked = head.lines().any(|l| l.starts_with("transfer-encoding:") && l.contains("chunked"));
    if let Some(n) = length {
        if buf.len() < header_end + n {
            return Ok(None);
        }
        let body = buf[header_end..header_end + n].to_vec();
        buf.drain(..header_end + n);
        return Ok(Some((status, body)));
    }
    if !chunked {
        return Err(RequestError("a response without a length".into()));
    }
    let mut body = Vec::new();
    let mut pos = header_end;
    loop {
        let Some(line_end) = buf[pos..].windows(2).position(|w| w == b"\r\n").map(|i| pos + i) else {
            return Ok(None);
        };
        let size = usize::from_str_radix(String::from_utf8_lossy(&buf[pos..line_end]).trim(), 16)
            .map_err(|_| RequestError("bad chunk size".into()))?;
        if buf.len() < line_end + 2 + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&buf[line_end + 2..line_end + 2 + size]);
        pos = line_end + 2 + size + 2;
        if size == 0 {
            buf.drain(..pos);
            return Ok(Some((status, body)));
        }
    }
}

/// An error for an answer with an error status, quoting its body.
pub(super) fn http_accepted(status: u16, body: &[u8]) -> Result<(), RequestError> {
    if status >= 400 {
        return Err(RequestError(format!("HTTP {status}: {}", String::from_utf8_lossy(body))));
    }
    Ok(())
}

/// The rows of a Query API answer, or its error.
pub(super) fn http_outcome(status: u16, body: &[u8]) -> Outcome {
    http_accepted(status, body)?;
    // The rows are checked as JSON and counted, not built: a tree of values per answer was most of the
    // generator's own work per HTTP request.
    #[derive(serde::Deserialize)]
    struct Answer {
        data: Option<Data>,
        #[serde(default)]
        errors: Vec<serde_json::Value>,
    }
    #[derive(serde::Deserialize)]
    struct Data {
        #[serde(default)]
        values: Vec<serde::de::IgnoredAny>,
    }
    let answer: Answer = serde_json::from_slice(body).map_err(|e| RequestError(format!("bad JSON response: {e}")))?;
    if let Some(error) = answer.errors.first() {
        return Err(RequestError(error.to_string()));
    }
    Ok(answer.data.map_or(0, |d| d.values.len()))
}

/// One thread's share of a phase.
pub(super) struct Share {
    /// Its first request's index in the schedule, and the distance to its next ones.
    pub first: u64,
    pub step: u64,
    /// Requests in the whole schedule, and how many of the first are warm-up.
    pub total: u64,
    pub warmup: u64,
    pub start: Instant,
    pub interval: f64,
}

impl Share {
    fn due(&self, i: u64) -> Instant {
        self.start + Duration::from_secs_f64(i as f64 * self.interval)
    }
}

/// Runs one thread's share of a phase on `wires`; `encode` writes request `i`'s bytes.
pub(super) fn drive(
    mut wires: Vec<Wire>,
    share: &Share,
    samples: usize,
    encode: &mut dyn FnMut(u64, &mut Vec<u8>),
) -> Result<Worker, String> {
    let mut worker = Worker { samples: Vec::with_capacity(samples), rows: 0, warmup_completed: 0, first_error: None };
    let poll = Poll::new().map_err(|e| format!("cannot set up polling: {e}"))?;
    for (k, w) in wires.iter().enumerate() {
        poll.add(w.stream.as_raw_fd(), k as u64, false).map_err(|e| format!("cannot poll a connection: {e}"))?;
    }
    let timer = Timer::new().map_err(|e| format!("cannot make a timer: {e}"))?;
    poll.add(timer.fd, TIMER_TOKEN, false).map_err(|e| format!("cannot poll the timer: {e}"))?;
    let mut next = share.first;
    let mut released: VecDeque<u64> = VecDeque::new();
    let mut idle: Vec<usize> = (0..wires.len()).rev().collect();
    let mut busy = 0usize;
    let record = |worker: &mut Worker, i: u64, outcome: Outcome| {
        if i < share.warmup {
            worker.warmup_completed += outcome.is_ok() as u64;
            return;
        }
        let latency = Instant::now().saturating_duration_since(share.due(i));
        let second = ((i - share.warmup) as f64 * share.interval) as u32;
        match outcome {
            Ok(rows) => {
                worker.rows += rows as u64;
                worker.samples.push(Sample::latency(second, latency));
            }
            Err(e) => {
                worker.samples.push(Sample::error(second));
                worker.first_error.get_or_insert(e.0);
            }
        }
    };
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
    // The request the timer is set for.
    let mut armed_for: Option<u64> = None;
    loop {
        let now = Instant::now();
        while next < share.total && share.due(next) <= now {
            released.push_back(next);
            next += share.step;
        }
        // A request released while every connection is busy waits for one; its latency still counts from its
        // due time.
        while !released.is_empty() {
            let Some(k) = idle.pop() else { break };
            let i = released.pop_front().expect("not empty");
            let w = &mut wires[k];
            if !w.start(i, encode) {
                return Err(format!("a connection failed while sending request {i}"));
            }
            busy += 1;
            if w.wants_to_write() {
                poll.modify(w.stream.as_raw_fd(), k as u64, true).map_err(|e| e.to_string())?;
            }
        }
        if next >= share.total && released.is_empty() && busy == 0 {
            return Ok(worker);
        }
        // The timer is set again only for a new next request: answers arriving in between leave it as it is.
        if next < share.total && released.is_empty() && armed_for != Some(next) {
            let wait = share.due(next).saturating_duration_since(Instant::now()).max(TICK);
            timer.arm(wait).map_err(|e| format!("cannot arm the timer: {e}"))?;
            armed_for = Some(next);
        }
        let n = poll.wait(&mut events).map_err(|e| format!("cannot poll: {e}"))?;
        for event in &events[..n] {
            let (token, flags) = (event.u64, event.events);
            if token == TIMER_TOKEN {
                timer.clear();
                continue;
            }
            let k = token as usize;
            let w = &mut wires[k];
            if flags & libc::EPOLLOUT as u32 != 0 {
                if !w.write_some() {
                    return Err("a connection failed while sending".into());
                }
                if !w.wants_to_write() {
                    poll.modify(w.stream.as_raw_fd(), token, false).map_err(|e| e.to_string())?;
                }
            }
            if flags & (libc::EPOLLIN | libc::EPOLLHUP | libc::EPOLLERR) as u32 == 0 {
                continue;
            }
            match w.on_readable() {
                Ok(None) => {
                    // A RESET after a failure may not have fit in the socket.
                    if w.wants_to_write() {
                        poll.modify(w.stream.as_raw_fd(), token, true).map_err(|e| e.to_string())?;
                    }
                }
                Ok(Some(outcome)) => {
                    let i = w.serving.take().expect("an answer belongs to a request");
                    record(&mut worker, i, outcome);
                    busy -= 1;
                    idle.push(k);
                }
                Err(e) => return Err(format!("a connection failed: {e}")),
            }
        }
    }
}

const TIMER_TOKEN: u64 = u64::MAX;

/// An `epoll` set.
struct Poll {
    fd: i32,
}

impl Poll {
    fn new() -> std::io::Result<Poll> {
        // SAFETY: epoll_create1 takes no pointers.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Poll { fd })
    }

    fn ctl(&self, op: i32, fd: i32, token: u64, writable: bool) -> std::io::Result<()> {
        let flags = libc::EPOLLIN | if writable { libc::EPOLLOUT } else { 0 };
        let mut event = libc::epoll_event { events: flags as u32, u64: token };
        // SAFETY: `event` is a valid epoll_event for the duration of the call.
        if unsafe { libc::epoll_ctl(self.fd, op, fd, &mut event) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn add(&self, fd: i32, token: u64, writable: bool) -> std::io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, writable)
    }

    fn modify(&self, fd: i32, token: u64, writable: bool) -> std::io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, writable)
    }

    /// Waits for at least one event (the timer is always armed or a request outstanding when this is called).
    fn wait(&self, events: &mut [libc::epoll_event]) -> std::io::Result<usize> {
        loop {
            // SAFETY: `events` is valid for `events.len()` entries.
            let n = unsafe { libc::epoll_wait(self.fd, events.as_mut_ptr(), events.len() as i32, -1) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Poll {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(self.fd) };
    }
}

/// A one-shot monotonic `timerfd`, accurate to microseconds (timer slack does not apply to it).
struct Timer {
    fd: i32,
}

impl Timer {
    fn new() -> std::io::Result<Timer> {
        // SAFETY: timerfd_create takes no pointers.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Timer { fd })
    }

    /// Fires once after `after` (at least a nanosecond: zero would disarm it).
    fn arm(&self, after: Duration) -> std::io::Result<()> {
        let after = after.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: after.as_secs() as libc::time_t, tv_nsec: after.subsec_nanos() as _ },
        };
        // SAFETY: `spec` is valid for the call; the old value is not asked for.
        if unsafe { libc::timerfd_settime(self.fd, 0, &spec, std::ptr::null_mut()) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads the expiry count, so that the descriptor stops reading as ready.
    fn clear(&self) {
        let mut count = 0u64;
        // SAFETY: reads at most 8 bytes into `count`.
        unsafe { libc::read(self.fd, (&mut count as *mut u64).cast(), 8) };
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_responses_are_taken_whole_with_a_length_or_in_chunks() {
        let mut buf = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel".to_vec();
        assert!(take_http_response(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"loHTTP/1.1 202 Accepted\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n");
        assert_eq!(take_http_response(&mut buf).unwrap(), Some((200, b"hello".to_vec())));
        assert!(take_http_response(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"2\r\nde\r\n0\r\n\r\nnext");
        assert_eq!(take_http_response(&mut buf).unwrap(), Some((202, b"abcde".to_vec())));
        assert_eq!(buf, b"next");
        let mut no_length = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        assert!(take_http_response(&mut no_length).is_err());
    }

    #[test]
    fn query_api_answers_count_rows_or_report_errors() {
        assert_eq!(http_outcome(200, br#"{"data": {"fields": ["x"], "values": [[1], [2]]}}"#).unwrap(), 2);
        let e = http_outcome(200, br#"{"errors": [{"code": "Neo.ClientError.Statement.SyntaxError"}]}"#);
        assert!(e.unwrap_err().0.contains("SyntaxError"));
        assert!(http_outcome(401, b"no").unwrap_err().0.starts_with("HTTP 401"));
        assert!(http_outcome(200, b"{").is_err());
    }
}
