//! The .prv.gz: one gzip member whose deflate stream is cut into segments at fixed offsets of
//! the plain .prv, each deflated from scratch and ended by a sync flush.
//!
//! Deflating the .prv is the largest single cost of a bundle. Cut this way (as pigz does,
//! without its shared dictionary), any segment can be deflated apart from the others and the
//! results joined in order: the browser page hands the last segments to a worker that has
//! finished its own part.
//! Every writer of a .prv.gz makes this same layout, so the bytes depend only on the plain .prv
//! and the level — not on who deflated which segment, nor on how the plain bytes were cut into
//! writes (tests below) — and the CLI, the bundle and the page give the same file:
//!
//! `header (10 bytes) · segment 1 · … · segment n · empty final block (03 00) · CRC-32 · size`
//!
//! Natively the compressor runs on a thread of its own: the sinks' writes (64 KiB each, see
//! prv.rs) are handed over through a bounded channel and the compressed bytes come back to be
//! written where the caller asked, on the caller's thread (the destination need not be `Send`: a
//! zip being built).

use std::io::{self, Write};

use crc32fast::Hasher;
use flate2::{Compress, Compression, FlushCompress};

/// Plain bytes per segment. Small enough that the page's workers share the last ones of a
/// 10 MB conversion, large enough that the restarts cost little in size.
pub const SEGMENT_BYTES: usize = 2 << 20;

/// Compressed bytes gathered before they are written to the destination.
const OUT_BYTES: usize = 64 << 10;

/// The gzip member's first bytes (RFC 1952): deflate, no name or time, XFL 2 at the slowest
/// level and 4 at the fastest, OS 255 (unknown).
pub fn header(level: u32) -> [u8; 10] {
    let xfl = match level {
        9 => 2,
        1 => 4,
        _ => 0,
    };
    [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255]
}

/// The member's last block: final, fixed Huffman codes, nothing but its end code.
const FINAL_BLOCK: [u8; 2] = [0x03, 0x00];

/// The CRC-32 and length of a run of bytes; sums of consecutive runs combine into the sum of
/// the whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sum {
    pub crc: u32,
    pub len: u64,
}

impl Sum {
    fn of(h: &Hasher) -> Sum {
        Sum {
            crc: h.clone().finalize(),
            len: h.total_len(),
        }
    }

    fn hasher(self) -> Hasher {
        Hasher::new_with_initial_len(self.crc, self.len)
    }
}

/// What a segment was: the sums of its plain bytes and of its deflated bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentSums {
    pub plain: Sum,
    pub deflated: Sum,
}

/// Deflates one segment at a time: [`write`](Self::write) its plain bytes (in any pieces),
/// [`end`](Self::end) it; the next segment then starts from scratch.
pub struct SegmentDeflate {
    deflate: Compress,
    plain: Hasher,
    deflated: Hasher,
}

impl SegmentDeflate {
    pub fn new(level: u32) -> SegmentDeflate {
        SegmentDeflate {
            deflate: Compress::new(Compression::new(level), false),
            plain: Hasher::new(),
            deflated: Hasher::new(),
        }
    }

    /// Deflates `plain`, appending to `out` what is ready.
    pub fn write(&mut self, plain: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        self.plain.update(plain);
        self.run(plain, out, FlushCompress::None)
    }

    /// Ends the segment with a sync flush (its last bytes appended to `out`) and gives its sums;
    /// the deflater is then as new.
    pub fn end(&mut self, out: &mut Vec<u8>) -> io::Result<SegmentSums> {
        self.run(&[], out, FlushCompress::Sync)?;
        let sums = SegmentSums {
            plain: Sum::of(&self.plain),
            deflated: Sum::of(&self.deflated),
        };
        self.deflate.reset();
        self.plain.reset();
        self.deflated.reset();
        Ok(sums)
    }

    fn run(&mut self, mut input: &[u8], out: &mut Vec<u8>, flush: FlushCompress) -> io::Result<()> {
        let from = out.len();
        loop {
            out.reserve(input.len() / 2 + 4096);
            let before = self.deflate.total_in();
            self.deflate
                .compress_vec(input, out, flush)
                .map_err(io::Error::other)?;
            input = &input[(self.deflate.total_in() - before) as usize..];
            // Done when the input is taken and the output did not fill the room it had (a
            // flush that filled it may have more to give).
            if input.is_empty() && out.len() < out.capacity() {
                break;
            }
        }
        self.deflated.update(&out[from..]);
        Ok(())
    }
}

/// The member put together from its segments, given in order: the header first
/// ([`Join::new`]), each segment's bytes as they come with its sums ([`Join::segment`]), the
/// end ([`Join::finish`]). Keeps the sums the trailer needs (of the plain .prv) and those a zip
/// entry needs (of the .prv.gz itself).
pub struct Join {
    plain: Hasher,
    gz: Hasher,
}

impl Join {
    /// The join and the member's header.
    pub fn new(level: u32) -> (Join, [u8; 10]) {
        let head = header(level);
        let mut gz = Hasher::new();
        gz.update(&head);
        (
            Join {
                plain: Hasher::new(),
                gz,
            },
            head,
        )
    }

    /// The next segment's sums (its bytes follow what came before).
    pub fn segment(&mut self, s: &SegmentSums) {
        self.plain.combine(&s.plain.hasher());
        self.gz.combine(&s.deflated.hasher());
    }

    /// The member's last bytes (final block and trailer), and the sums of the whole .prv.gz.
    pub fn finish(mut self) -> (Vec<u8>, Sum) {
        let mut tail = FINAL_BLOCK.to_vec();
        let plain = Sum::of(&self.plain);
        tail.extend_from_slice(&plain.crc.to_le_bytes());
        // ISIZE: the plain size modulo 2^32.
        tail.extend_from_slice(&(plain.len as u32).to_le_bytes());
        self.gz.update(&tail);
        (tail, Sum::of(&self.gz))
    }
}

/// A .prv.gz of what is written to it, into `W`, cut into segments as the module says.
struct Segmented<W: Write> {
    out: W,
    deflate: SegmentDeflate,
    join: Join,
    /// Plain bytes in the open segment.
    at: usize,
    /// Compressed bytes not yet written to `out`.
    pending: Vec<u8>,
}

impl<W: Write> Segmented<W> {
    fn new(out: W, level: u32) -> Segmented<W> {
        let (join, head) = Join::new(level);
        Segmented {
            out,
            deflate: SegmentDeflate::new(level),
            join,
            at: 0,
            pending: head.to_vec(),
        }
    }

    fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let n = buf.len().min(SEGMENT_BYTES - self.at);
            self.deflate.write(&buf[..n], &mut self.pending)?;
            self.at += n;
            buf = &buf[n..];
            if self.at == SEGMENT_BYTES {
                self.end_segment()?;
            }
        }
        if self.pending.len() >= OUT_BYTES {
            self.out.write_all(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }

    fn end_segment(&mut self) -> io::Result<()> {
        let sums = self.deflate.end(&mut self.pending)?;
        self.join.segment(&sums);
        self.at = 0;
        Ok(())
    }

    /// Writes the compressed bytes ready so far (the deflate stream itself is not flushed:
    /// the bytes do not depend on when a caller flushes).
    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.pending)?;
        self.pending.clear();
        self.out.flush()
    }

    fn finish(mut self) -> io::Result<W> {
        if self.at > 0 {
            self.end_segment()?;
        }
        let (tail, _) = self.join.finish();
        self.pending.extend_from_slice(&tail);
        self.out.write_all(&self.pending)?;
        Ok(self.out)
    }
}

/// A gzip stream of what is written to it, into `W`.
pub struct GzipWriter<W: Write> {
    inner: Inner<W>,
}

enum Inner<W: Write> {
    /// Compressed on the calling thread.
    Inline(Segmented<W>),
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
            inner: Inner::Inline(Segmented::new(out, level)),
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

    /// Writes the compressed bytes ready so far, then flushes the destination.
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Inline(gz) => gz.flush(),
            #[cfg(not(target_family = "wasm"))]
            Inner::Threaded(t) => t.flush(),
        }
    }
}

#[cfg(not(target_family = "wasm"))]
mod threaded {
    use std::io::{self, Write};
    use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
    use std::thread::JoinHandle;

    use super::Segmented;

    /// Writes waiting for the compressor at most (with 64 KiB writes: 1 MiB in flight).
    const IN_FLIGHT: usize = 16;

    pub enum Job {
        Data(Vec<u8>),
        /// The compressed bytes ready so far, handed back; the compressor answers with
        /// [`Done::Flushed`] after them.
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
                let mut gz = Segmented::new(Vec::new(), level);
                for job in todo {
                    let r = match job {
                        Job::Data(b) => gz.write_all(&b).map(|_| false),
                        Job::Flush => gz.flush().map(|_| true),
                    };
                    let answer = match r {
                        Ok(flushed) => {
                            let bytes = std::mem::take(&mut gz.out);
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

    /// A .prv-like body of `lines` lines (~30 bytes each).
    fn body(lines: u64) -> Vec<u8> {
        let mut body = Vec::new();
        for i in 0..lines {
            body.extend_from_slice(
                format!("2:0:1:1:{}:{}:50000001:{}\n", i % 7 + 1, i * 1234, i % 97).as_bytes(),
            );
        }
        body
    }

    fn gunzip(gz: &[u8]) -> Vec<u8> {
        let mut back = Vec::new();
        io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz), &mut back).unwrap();
        back
    }

    /// The member made segment by segment, each by a deflater of its own and fed in pieces of
    /// `cut` bytes, as the page's workers make it.
    fn joined(plain: &[u8], level: u32, cut: usize) -> (Vec<u8>, Sum) {
        let (mut join, head) = Join::new(level);
        let mut gz = head.to_vec();
        for segment in plain.chunks(SEGMENT_BYTES) {
            let mut d = SegmentDeflate::new(level);
            for piece in segment.chunks(cut) {
                d.write(piece, &mut gz).unwrap();
            }
            join.segment(&d.end(&mut gz).unwrap());
        }
        let (tail, sum) = join.finish();
        gz.extend_from_slice(&tail);
        (gz, sum)
    }

    #[test]
    fn segments_deflated_apart_join_into_the_writers_bytes_whatever_the_pieces() {
        // Three segments and a bit.
        let plain = body(230_000);
        assert!(plain.len() > 3 * SEGMENT_BYTES && plain.len() < 4 * SEGMENT_BYTES);
        for (level, cuts) in [
            (2, &[1 << 20, 1000, 7][..]),
            (1, &[65_536][..]),
            (6, &[65_536][..]),
        ] {
            let mut w = GzipWriter::inline(Vec::new(), level);
            for piece in plain.chunks(65_536) {
                w.write_all(piece).unwrap();
            }
            w.flush().unwrap();
            let want = w.finish().unwrap();
            assert!(gunzip(&want) == plain, "level {level}");
            for &cut in cuts {
                let (got, sum) = joined(&plain, level, cut);
                assert!(got == want, "level {level}, pieces of {cut}");
                let mut c = Hasher::new();
                c.update(&want);
                assert_eq!(
                    sum,
                    Sum {
                        crc: c.finalize(),
                        len: want.len() as u64
                    }
                );
            }
        }
    }

    #[test]
    fn the_member_is_valid_at_segment_edges_and_when_empty() {
        for len in [
            0,
            1,
            SEGMENT_BYTES - 1,
            SEGMENT_BYTES,
            SEGMENT_BYTES + 1,
            2 * SEGMENT_BYTES,
        ] {
            let plain: Vec<u8> = body(80_000).into_iter().cycle().take(len).collect();
            let mut w = GzipWriter::inline(Vec::new(), 2);
            w.write_all(&plain).unwrap();
            let gz = w.finish().unwrap();
            assert!(gunzip(&gz) == plain, "{len} bytes");
            // No segment is empty: exactly one segment's worth is one segment.
            assert!(joined(&plain, 2, 4096).0 == gz, "{len} bytes");
            // A segment ends with a sync flush's empty stored block; the member with the
            // final block and the trailer.
            let n = gz.len();
            assert_eq!(gz[..10], header(2));
            assert_eq!(gz[n - 10..n - 8], FINAL_BLOCK);
            assert_eq!(gz[n - 4..], (len as u32).to_le_bytes());
            if len > 0 {
                assert_eq!(gz[n - 14..n - 10], [0, 0, 0xff, 0xff]);
            }
        }
    }

    #[test]
    fn segments_cost_almost_nothing_in_size() {
        let plain = body(230_000);
        let mut one = flate2::write::GzEncoder::new(Vec::new(), Compression::new(2));
        one.write_all(&plain).unwrap();
        let one = one.finish().unwrap().len() as f64;
        let segmented = joined(&plain, 2, 65_536).0.len() as f64;
        assert!(segmented / one < 1.01, "{segmented} against {one} bytes");
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
