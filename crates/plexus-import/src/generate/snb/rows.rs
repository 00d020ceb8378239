//! Formatting rows into per-file byte buffers, and the pipeline that builds chunks of rows on worker threads and
//! writes them to the files in chunk order, so the output does not depend on the number of threads.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use super::schema::{F, FILES};

/// A value that formats as one CSV field.
pub(crate) trait Field {
    fn put(&self, out: &mut Vec<u8>);
}

impl Field for u64 {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        let mut n = *self;
        loop {
            at -= 1;
            buf[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&buf[at..]);
    }
}

impl Field for u32 {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        u64::from(*self).put(out)
    }
}

impl Field for i64 {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        if *self < 0 {
            out.push(b'-');
        }
        self.unsigned_abs().put(out)
    }
}

impl Field for str {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes())
    }
}

impl<T: Field + ?Sized> Field for &T {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        (**self).put(out)
    }
}

impl Field for String {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes())
    }
}

/// An IPv4 address.
#[derive(Clone, Copy)]
pub(crate) struct Ip(pub u32);

impl Field for Ip {
    fn put(&self, out: &mut Vec<u8>) {
        for (k, byte) in self.0.to_be_bytes().iter().enumerate() {
            if k > 0 {
                out.push(b'.');
            }
            u64::from(*byte).put(out);
        }
    }
}

/// The rows of one chunk: a text buffer and a row count per file.
pub(crate) struct Chunk {
    pub bufs: Vec<Vec<u8>>,
    pub rows: Vec<u64>,
}

impl Chunk {
    pub(crate) fn new() -> Chunk {
        Chunk { bufs: vec![Vec::new(); FILES.len()], rows: vec![0; FILES.len()] }
    }

    /// The buffer of `file`, counting one more row in it.
    #[inline]
    pub(crate) fn row(&mut self, file: F) -> &mut Vec<u8> {
        self.rows[file as usize] += 1;
        &mut self.bufs[file as usize]
    }

    /// Empties the buffers for reuse, giving back the memory of an unusually large chunk (a hub's).
    fn clear(&mut self) {
        for buf in &mut self.bufs {
            buf.clear();
            if buf.capacity() > KEEP_CAPACITY {
                buf.shrink_to(KEEP_CAPACITY);
            }
        }
        self.rows.iter_mut().for_each(|r| *r = 0);
    }
}

/// Appends one row to a file of a [`Chunk`]: `row!(chunk, F::Tag; id, name, url)`.
macro_rules! row {
    ($chunk:expr, $file:expr; $first:expr $(, $rest:expr)* $(,)?) => {{
        let buf = $chunk.row($file);
        $crate::generate::snb::rows::Field::put(&$first, buf);
        $(
            buf.push(b'|');
            $crate::generate::snb::rows::Field::put(&$rest, buf);
        )*
        buf.push(b'\n');
    }};
}
pub(crate) use row;

/// The open output files, with what has been written to each.
pub(crate) struct Outputs {
    files: Vec<(PathBuf, BufWriter<File>)>,
    pub rows: Vec<u64>,
    pub bytes: Vec<u64>,
}

/// The error of writing `path`, for [`super::Error::Io`].
pub(crate) type PathError = (PathBuf, io::Error);

impl Outputs {
    /// Creates `dir/static` and `dir/dynamic` and every file in them, each starting with its header row.
    pub(crate) fn create(dir: &Path) -> Result<Outputs, PathError> {
        let mut files = Vec::with_capacity(FILES.len());
        let mut bytes = Vec::with_capacity(FILES.len());
        for spec in &FILES {
            let sub = dir.join(spec.dir);
            std::fs::create_dir_all(&sub).map_err(|e| (sub.clone(), e))?;
            let path = sub.join(spec.name);
            let file = File::create(&path).map_err(|e| (path.clone(), e))?;
            let mut w = BufWriter::with_capacity(256 << 10, file);
            w.write_all(spec.header.as_bytes()).and_then(|_| w.write_all(b"\n")).map_err(|e| (path.clone(), e))?;
            bytes.push(spec.header.len() as u64 + 1);
            files.push((path, w));
        }
        Ok(Outputs { files, rows: vec![0; FILES.len()], bytes })
    }

    pub(crate) fn write(&mut self, chunk: &Chunk) -> Result<(), PathError> {
        for (k, (path, w)) in self.files.iter_mut().enumerate() {
            w.write_all(&chunk.bufs[k]).map_err(|e| (path.clone(), e))?;
            self.rows[k] += chunk.rows[k];
            self.bytes[k] += chunk.bufs[k].len() as u64;
        }
        Ok(())
    }

    /// Flushes and closes every file (no fsync: generated data is cheap to make again).
    pub(crate) fn finish(self) -> Result<(), PathError> {
        for (path, mut w) in self.files {
            w.flush().map_err(|e| (path.clone(), e))?;
        }
        Ok(())
    }
}

/// Bytes a file's buffer keeps between chunks.
const KEEP_CAPACITY: usize = 1 << 20;

/// Chunks in flight per worker: one being filled, one queued, one being written.
const CHUNKS_PER_WORKER: usize = 3;

/// Builds chunks `0..chunks` with `make` on `threads` workers and writes them to `out` in order, calling
/// `progress(chunks_done)` after each. Worker `w` owns chunks `w, w + threads, ...` and hands them through its own
/// bounded channel, so the writer takes chunk `i` from worker `i mod threads`: no reordering, bounded memory.
pub(crate) fn run(
    chunks: u64,
    threads: usize,
    make: &(dyn Fn(u64, &mut Chunk) + Sync),
    out: &mut Outputs,
    progress: &mut dyn FnMut(u64),
) -> Result<(), PathError> {
    let threads = threads.clamp(1, chunks.max(1) as usize);
    std::thread::scope(|scope| {
        let mut lanes = Vec::with_capacity(threads);
        for w in 0..threads {
            let (full_tx, full_rx) = mpsc::sync_channel::<Chunk>(CHUNKS_PER_WORKER);
            let (empty_tx, empty_rx) = mpsc::channel::<Chunk>();
            for _ in 0..CHUNKS_PER_WORKER {
                let _ = empty_tx.send(Chunk::new());
            }
            scope.spawn(move || {
                let mut chunk = w as u64;
                while chunk < chunks {
                    // A closed channel means the writer gave up (an I/O error): stop quietly.
                    let Ok(mut buf) = empty_rx.recv() else { return };
                    buf.clear();
                    make(chunk, &mut buf);
                    if full_tx.send(buf).is_err() {
                        return;
                    }
                    chunk += threads as u64;
                }
            });
            lanes.push((full_rx, empty_tx));
        }
        for chunk in 0..chunks {
            let (full_rx, empty_tx) = &lanes[(chunk % threads as u64) as usize];
            let buf = full_rx.recv().map_err(|_| (PathBuf::new(), io::Error::other("a generator thread stopped")))?;
            out.write(&buf)?;
            let _ = empty_tx.send(buf);
            progress(chunk + 1);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_format() {
        let mut c = Chunk::new();
        row!(c, F::Tag; 0u64, "a b", u64::MAX);
        row!(c, F::Tag; -1_000i64, Ip(0xC0A8_0001), 7u32);
        assert_eq!(c.rows[F::Tag as usize], 2);
        assert_eq!(
            std::str::from_utf8(&c.bufs[F::Tag as usize]).unwrap(),
            "0|a b|18446744073709551615\n-1000|192.168.0.1|7\n"
        );
    }
}
