//! The .prv.gz writer: gzip on a thread of its own where the build has threads.
//!
//! Deflating the .prv is the largest single cost of a bundle (the .prv is ~3 bytes per byte of
//! SQLite read), and it ran on the sinks' thread after formatting. Natively it now runs on a third
//! thread: the sinks' writes (64 KiB each, see prv.rs) are handed over through a bounded channel,
//! and the compressed bytes come back to be written where the caller asked, on the caller's
//! thread (the destination need not be `Send`: a zip being built). The compressor is the same
//! `GzEncoder` at the same level, given the same writes and flushes in the same order, so the
//! bytes are the same as on one thread (tests below), as the wasm build makes them.

use std::io::{self, Write};

use flate2::write::GzEncoder;
use flate2::Compression;

/// A gzip stream of what is written to it, into `W`.
pub struct GzipWriter<W: Write> {
    inner: Inner<W>,
}

enum Inner<W: Write> {
    /// Compressed on the calling thread.
    Inline(GzEncoder<W>),
    #[cfg(not(target_family = "wasm"))]
    Threaded(threaded::Threaded<W>),
}

impl<W: Write> GzipWriter<W> {
    /// Compresses at `level` (1–9) into `out`, on a second thread when the machine has more than
    /// one core, the build has threads and the options allow it (`--read-ahead off` keeps a
    /// conversion on one thread, as in the browser's worker).
    pub fn new(out: W, level: u32, opts: &crate::options::Options) -> Self {
        #[cfg(target_family = "wasm")]
        let _ = opts;
        #[cfg(not(target_family = "wasm"))]
        if opts.second_thread_allowed() {
            return GzipWriter {
                inner: Inner::Threaded(threaded::Threaded::new(out, level)),
            };
        }
        Self::inline(out, level)
    }

    /// Compresses on the calling thread.
    pub fn inline(out: W, level: u32) -> Self {
        GzipWriter {
            inner: Inner::Inline(GzEncoder::new(out, Compression::new(level))),
        }
    }

    /// Ends the gzip stream (its trailer written to the destination) and returns the destination.
    pub fn finish(self) -> io::Result<W> {
        match self.inner {
            Inner::Inline(gz) => gz.finish(),
            #[cfg(not(target_family = "wasm"))]
            Inner::Threaded(t) => t.finish(),
        }
    }
}

impl<W: Write> Write for GzipWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.inner {
            Inner::Inline(gz) => gz.write_all(buf),
            #[cfg(not(target_family = "wasm"))]
            Inner::Threaded(t) => t.send(threaded::Job::Data(buf.to_vec())),
        }
    }

    /// A gzip sync flush (as `GzEncoder::flush`), then the destination's flush.
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Inline(gz) => gz.flush(),
            #[cfg(not(target_family = "wasm"))]
            Inner::Threaded(t) => t.flush(),
        }
    }
}

/// The .prv.gz of a .prv handed over piece by piece, exactly as [`GzipWriter`] makes it in a
/// conversion (the writes, one sync flush when the trace ends, then the gzip trailer), for a
/// compressor that is not where the trace is written: the browser page's gzip worker (see
/// `bundle::BundleWriter`). Deflate's output does not depend on how its input is
/// cut into writes (tests below), so the pieces need not be the writer's. Also gives the
/// CRC-32 and size of the compressed bytes, which the bundle's zip entry needs.
pub struct GzipStream {
    enc: GzEncoder<Vec<u8>>,
    crc: flate2::Crc,
    size: u64,
}

impl GzipStream {
    pub fn new(level: u32) -> GzipStream {
        GzipStream {
            enc: GzEncoder::new(Vec::new(), Compression::new(level)),
            crc: flate2::Crc::new(),
            size: 0,
        }
    }

    /// Compresses `raw`; returns the compressed bytes ready so far.
    pub fn write(&mut self, raw: &[u8]) -> io::Result<Vec<u8>> {
        self.enc.write_all(raw)?;
        Ok(self.take())
    }

    /// Ends the stream as a conversion ends it; returns the last compressed bytes, and the
    /// CRC-32 and size of all of them.
    pub fn finish(mut self) -> io::Result<(Vec<u8>, u32, u64)> {
        self.enc.flush()?;
        let mut last = self.take();
        let rest = self.enc.finish()?;
        self.crc.update(&rest);
        self.size += rest.len() as u64;
        last.extend_from_slice(&rest);
        Ok((last, self.crc.sum(), self.size))
    }

    fn take(&mut self) -> Vec<u8> {
        let out = std::mem::take(self.enc.get_mut());
        self.crc.update(&out);
        self.size += out.len() as u64;
        out
    }
}

#[cfg(not(target_family = "wasm"))]
mod threaded {
    use std::io::{self, Write};
    use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
    use std::thread::JoinHandle;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    /// Writes waiting for the compressor at most (with 64 KiB writes: 1 MiB in flight).
    const IN_FLIGHT: usize = 16;

    pub enum Job {
        Data(Vec<u8>),
        /// A sync flush; the compressor answers with [`Done::Flushed`].
        Flush,
    }

    enum Done {
        Bytes(Vec<u8>),
        Flushed,
        Failed(io::Error),
    }

    pub struct Threaded<W: Write> {
        /// The destination (`None` only once [`finish`](Self::finish) took it).
        out: Option<W>,
        /// `None` once finished (dropped: the compressor ends).
        jobs: Option<SyncSender<Job>>,
        done: Receiver<Done>,
        compressor: Option<JoinHandle<()>>,
    }

    impl<W: Write> Threaded<W> {
        pub fn new(out: W, level: u32) -> Self {
            let (jobs, todo) = sync_channel::<Job>(IN_FLIGHT);
            // Unbounded, but drained at every write: it holds what one write's wait lets through.
            let (reply, done) = std::sync::mpsc::channel::<Done>();
            let compressor = std::thread::spawn(move || {
                let mut gz = GzEncoder::new(Vec::new(), Compression::new(level));
                for job in todo {
                    let r = match job {
                        Job::Data(b) => gz.write_all(&b).map(|_| false),
                        Job::Flush => gz.flush().map(|_| true),
                    };
                    let answer = match r {
                        Ok(flushed) => {
                            let bytes = std::mem::take(gz.get_mut());
                            if !bytes.is_empty() && reply.send(Done::Bytes(bytes)).is_err() {
                                return;
                            }
                            flushed.then_some(Done::Flushed)
                        }
                        Err(e) => Some(Done::Failed(e)),
                    };
                    if let Some(a) = answer {
                        let failed = matches!(a, Done::Failed(_));
                        if reply.send(a).is_err() || failed {
                            return;
                        }
                    }
                }
                // Every job was sent: the end of the stream.
                let answer = match gz.finish() {
                    Ok(rest) => Done::Bytes(rest),
                    Err(e) => Done::Failed(e),
                };
                let _ = reply.send(answer);
            });
            Threaded {
                out: Some(out),
                jobs: Some(jobs),
                done,
                compressor: Some(compressor),
            }
        }

        pub fn send(&mut self, job: Job) -> io::Result<()> {
            self.drain()?;
            let sent = self.jobs.as_ref().map(|j| j.send(job));
            match sent {
                Some(Ok(())) => Ok(()),
                // The compressor stopped: its reason is waiting in `done`.
                _ => self.drain().and(Err(stopped())),
            }
        }

        /// Writes what the compressor has given back so far.
        fn drain(&mut self) -> io::Result<()> {
            while let Ok(d) = self.done.try_recv() {
                self.take(d)?;
            }
            Ok(())
        }

        fn take(&mut self, d: Done) -> io::Result<()> {
            match d {
                Done::Bytes(b) => self.out().write_all(&b),
                Done::Flushed => Ok(()),
                Done::Failed(e) => Err(e),
            }
        }

        pub fn flush(&mut self) -> io::Result<()> {
            self.send(Job::Flush)?;
            loop {
                match self.done.recv() {
                    Ok(Done::Flushed) => return self.out().flush(),
                    Ok(d) => self.take(d)?,
                    Err(_) => return Err(stopped()),
                }
            }
        }

        pub fn finish(mut self) -> io::Result<W> {
            drop(self.jobs.take()); // the compressor finishes the stream and ends
            while let Ok(d) = self.done.recv() {
                self.take(d)?;
            }
            self.join()?;
            Ok(self.out.take().expect("taken only here"))
        }

        fn out(&mut self) -> &mut W {
            self.out.as_mut().expect("taken only by finish")
        }

        fn join(&mut self) -> io::Result<()> {
            match self.compressor.take().map(JoinHandle::join) {
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                _ => Ok(()),
            }
        }
    }

    impl<W: Write> Drop for Threaded<W> {
        /// Unfinished (an error elsewhere): the compressor is told to stop and waited for.
        fn drop(&mut self) {
            drop(self.jobs.take());
            if let Some(c) = self.compressor.take() {
                let _ = c.join();
            }
        }
    }

    fn stopped() -> io::Error {
        io::Error::other("the gzip compressor stopped")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text like a .prv body, in writes of varied sizes, with a flush midway.
    fn write_sample(w: &mut impl Write) {
        let mut line = String::new();
        for i in 0..60_000u64 {
            line.clear();
            line.push_str(&format!(
                "2:0:1:1:{}:{}:50000001:{}\n",
                i % 7 + 1,
                i * 1234,
                i % 97
            ));
            w.write_all(line.as_bytes()).unwrap();
            if i == 30_000 {
                w.flush().unwrap();
            }
        }
    }

    #[test]
    fn the_stream_gives_the_writers_bytes_whatever_the_pieces() {
        // The writer's bytes: the sample's writes, then the flush and end of a conversion.
        let mut body = Vec::new();
        for i in 0..60_000u64 {
            body.extend_from_slice(
                format!("2:0:1:1:{}:{}:50000001:{}\n", i % 7 + 1, i * 1234, i % 97).as_bytes(),
            );
        }
        for level in [1, 2, 6] {
            let mut w = GzipWriter::inline(Vec::new(), level);
            for piece in body.chunks(65_536) {
                w.write_all(piece).unwrap();
            }
            w.flush().unwrap();
            let want = w.finish().unwrap();
            // Pieces of other sizes, even odd ones, through the stream.
            for cut in [1 << 20, 1000, 7] {
                let mut s = GzipStream::new(level);
                let mut got = Vec::new();
                for piece in body.chunks(cut) {
                    got.extend(s.write(piece).unwrap());
                }
                let (last, crc, size) = s.finish().unwrap();
                got.extend(last);
                assert_eq!(got, want, "level {level}, pieces of {cut}");
                let mut c = flate2::Crc::new();
                c.update(&want);
                assert_eq!((crc, size), (c.sum(), want.len() as u64));
            }
        }
    }

    #[test]
    fn the_threaded_compressor_gives_the_inline_bytes() {
        for level in [1, 2, 6] {
            let mut inline = GzipWriter::inline(Vec::new(), level);
            write_sample(&mut inline);
            let inline = inline.finish().unwrap();
            let mut threaded = GzipWriter {
                inner: Inner::Threaded(threaded::Threaded::new(Vec::new(), level)),
            };
            write_sample(&mut threaded);
            let threaded = threaded.finish().unwrap();
            assert!(inline == threaded, "level {level}");
            let mut plain = Vec::new();
            write_sample(&mut plain);
            let mut back = Vec::new();
            io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&threaded[..]), &mut back)
                .unwrap();
            assert!(back == plain);
        }
    }

    /// A destination that fails after some bytes.
    struct Full(usize);
    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.0 {
                return Err(io::Error::other("disk full"));
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failing_destination_is_an_error_not_a_hang() {
        let mut w = GzipWriter {
            inner: Inner::Threaded(threaded::Threaded::new(Full(10_000), 2)),
        };
        let mut failed = None;
        for _ in 0..2_000 {
            if let Err(e) = w.write_all(&[b'x'; 65_536]).and_then(|_| w.write_all(b"y")) {
                failed = Some(e);
                break;
            }
        }
        let e = failed.or_else(|| w.finish().err()).expect("an error");
        assert_eq!(e.to_string(), "disk full");
    }
}
