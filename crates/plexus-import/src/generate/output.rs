//! Writing generated edges: text formatting of one edge, the compressed or plain output file, and the pipeline
//! that formats chunks on worker threads and writes them in chunk order.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::mpsc;

use super::{Options, Progress, Source};

/// Weights are drawn as integers below this and printed as `0.dddddd`.
pub(crate) const WEIGHT_STEPS: u64 = 1_000_000;

/// Two decimal digits per entry, so numbers format two digits per division.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n` in decimal at `line[pos..]` and returns the position after it.
#[inline(always)]
fn put_u64(line: &mut [u8; LINE], pos: usize, mut n: u64) -> usize {
    let end = pos + n.checked_ilog10().map_or(1, |l| l as usize + 1);
    let mut at = end;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        line[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        line[at - 2..at].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        line[at - 1] = b'0' + n as u8;
    }
    end
}

/// Longest line: two 20-digit ids, a weight `,0.dddddd`, two separators; rounded up to a vector-friendly size.
const LINE: usize = 64;

/// Appends `source,target\n`, or `source,target,0.dddddd\n` when `weight` (below [`WEIGHT_STEPS`]) is given.
///
/// The line is built in a fixed array and appended whole, then the tail cut off: a fixed-size copy compiles to a
/// few vector moves, where appending each variable-length piece costs a `memmove` call apiece (a tenth of the
/// generator's time when profiled).
#[inline]
pub(crate) fn push_edge(out: &mut Vec<u8>, source: u64, target: u64, weight: Option<u64>) {
    let mut line = [0u8; LINE];
    let mut len = put_u64(&mut line, 0, source);
    line[len] = b',';
    len = put_u64(&mut line, len + 1, target);
    if let Some(w) = weight {
        line[len..len + 3].copy_from_slice(b",0.");
        let mut w = w;
        for d in line[len + 3..len + 9].iter_mut().rev() {
            *d = b'0' + (w % 10) as u8;
            w /= 10;
        }
        len += 9;
    }
    line[len] = b'\n';
    let start = out.len();
    out.extend_from_slice(&line);
    out.truncate(start + len + 1);
}

/// The output file: plain, gzip or zstd by extension, all on top of a large buffered writer.
pub(crate) enum Sink {
    Plain(BufWriter<File>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
    Zstd(zstd::Encoder<'static, BufWriter<File>>),
}

/// Extensions of compressed formats the generator does not write.
const OTHER_COMPRESSIONS: [&str; 9] = ["bz2", "xz", "lzma", "lz4", "zip", "7z", "br", "tgz", "z"];

/// Compressors emit small pieces: gather them into large writes.
const FILE_BUFFER: usize = 4 << 20;
const PLAIN_BUFFER: usize = 64 << 10;

/// Why the generator cannot write to `path`, when its name asks for a compression it does not write: written
/// plain under that name, the file would fool every tool that trusts the name.
pub fn unwritable_compression(path: &Path) -> Option<String> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    OTHER_COMPRESSIONS
        .contains(&ext.as_str())
        .then(|| format!("cannot write .{ext} files: name the output .gz or .zst to compress it, or neither for text"))
}

impl Sink {
    pub(crate) fn create(path: &Path) -> io::Result<Sink> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        if let Some(why) = unwritable_compression(path) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        }
        let file = File::create(path)?;
        Ok(match ext.as_str() {
            // Fast levels: generation outruns any compressor, so the writer thread's compression is the limit
            // and the stronger levels buy little on this repetitive text.
            "gz" => Sink::Gzip(flate2::write::GzEncoder::new(
                BufWriter::with_capacity(FILE_BUFFER, file),
                flate2::Compression::fast(),
            )),
            "zst" => Sink::Zstd(zstd::Encoder::new(BufWriter::with_capacity(FILE_BUFFER, file), 1)?),
            // Chunks (about a megabyte) are larger than this buffer, so BufWriter hands them straight to the
            // file instead of copying them; only the header line is buffered.
            _ => Sink::Plain(BufWriter::with_capacity(PLAIN_BUFFER, file)),
        })
    }

    /// Flushes everything to the file and returns its size. No fsync: a generated file is cheap to make again,
    /// and the rate should measure generation, not the disk.
    pub(crate) fn finish(self) -> io::Result<u64> {
        let mut file = match self {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
            Sink::Zstd(w) => w.finish()?,
        };
        file.flush()?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.metadata().map(|m| m.len())
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Gzip(w) => w.write(buf),
            Sink::Zstd(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.write_all(buf),
            Sink::Gzip(w) => w.write_all(buf),
            Sink::Zstd(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
            Sink::Zstd(w) => w.flush(),
        }
    }
}

/// Buffers in flight per worker: one being filled, one queued, one being written.
const BUFFERS_PER_WORKER: usize = 3;

/// Generates every chunk of `src` and writes the text to `out` in chunk order; returns the bytes written.
///
/// Worker `w` of `t` owns chunks `w, w + t, w + 2t, ...` and hands each through its own bounded channel, so the
/// writer reads chunk `i` from worker `i mod t` in order: no reordering buffer, and memory is bounded by
/// [`BUFFERS_PER_WORKER`] buffers per worker. Buffers go back to their worker for reuse.
pub(crate) fn run(
    src: &dyn Source,
    options: &Options,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(Progress),
) -> io::Result<u64> {
    let mut written = 0u64;
    if options.header {
        let header: &[u8] = if options.weights { b"source,target,weight\n" } else { b"source,target\n" };
        out.write_all(header)?;
        written += header.len() as u64;
    }
    let chunks = src.chunks();
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let threads = threads.clamp(1, chunks.max(1) as usize);
    let total = src.edges();
    std::thread::scope(|scope| {
        let mut lanes = Vec::with_capacity(threads);
        for w in 0..threads {
            let (full_tx, full_rx) = mpsc::sync_channel::<(Vec<u8>, u64)>(BUFFERS_PER_WORKER);
            let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
            for _ in 0..BUFFERS_PER_WORKER {
                let _ = empty_tx.send(Vec::new());
            }
            scope.spawn(move || {
                let mut chunk = w as u64;
                while chunk < chunks {
                    // Either channel closing means the writer gave up (an I/O error): stop quietly.
                    let Ok(mut buf) = empty_rx.recv() else { return };
                    buf.clear();
                    let edges = src.write_chunk(chunk, &mut buf);
                    if full_tx.send((buf, edges)).is_err() {
                        return;
                    }
                    chunk += threads as u64;
                }
            });
            lanes.push((full_rx, empty_tx));
        }
        let mut done = 0u64;
        for chunk in 0..chunks {
            let (full_rx, empty_tx) = &lanes[(chunk % threads as u64) as usize];
            let (buf, edges) = full_rx.recv().map_err(|_| io::Error::other("a generator thread stopped"))?;
            out.write_all(&buf)?;
            written += buf.len() as u64;
            done += edges;
            let _ = empty_tx.send(buf);
            progress(Progress { edges_done: done, edges_total: total });
        }
        // On an early error return the lanes drop here, before the scope joins, which ends the workers.
        Ok(written)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_format_as_csv_lines() {
        let mut out = Vec::new();
        push_edge(&mut out, 0, 18_446_744_073_709_551_615, None);
        push_edge(&mut out, 12, 3, Some(0));
        push_edge(&mut out, 7, 8, Some(999_999));
        push_edge(&mut out, 1, 2, Some(4_200));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "0,18446744073709551615\n12,3,0.000000\n7,8,0.999999\n1,2,0.004200\n"
        );
    }
}
