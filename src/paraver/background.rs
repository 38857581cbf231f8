//! A destination written on a thread of its own: the bytes are gathered into large buffers on
//! the caller's side and handed over whole, so the caller waits on the write calls only when
//! the thread is `IN_FLIGHT` buffers behind.
//!
//! Why: writing the .prv is the kernel copying it into the page cache, which on a VM backed on
//! first touch can bound the end of a run if done on the sinks' thread. The CLI uses it where
//! a core is free for it (a third busy thread on two cores would take turns with the reading
//! thread, which bounds the conversion). The bytes and their order are the caller's, whatever
//! the buffers (tests below).

use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes gathered before they are handed over.
const BUFFER: usize = 1 << 20;
/// Buffers waiting for the writing thread at most: the caller waits beyond (memory stays flat).
const IN_FLIGHT: usize = 4;

enum Job {
    Data(Vec<u8>),
    /// Flush the destination; the thread answers on `flushed`.
    Flush,
}

/// A [`Write`] whose writes to `W` happen on another thread. Errors of the destination come
/// back at a later write, at [`flush`](Write::flush) or at [`finish`](Self::finish).
pub struct BackgroundWriter<W: Write + Send + 'static> {
    buf: Vec<u8>,
    /// `None` once finished.
    jobs: Option<SyncSender<Job>>,
    /// Buffers written, given back for reuse.
    spare: Receiver<Vec<u8>>,
    flushed: Receiver<()>,
    /// Gives back the destination, or the error that stopped the thread.
    thread: Option<JoinHandle<io::Result<W>>>,
}

impl<W: Write + Send + 'static> BackgroundWriter<W> {
    pub fn new(mut out: W) -> Self {
        let (jobs, todo) = sync_channel::<Job>(IN_FLIGHT);
        let (give_back, spare) = channel::<Vec<u8>>();
        let (flush_done, flushed) = channel::<()>();
        let thread = std::thread::spawn(move || {
            for job in todo {
                match job {
                    Job::Data(mut b) => {
                        out.write_all(&b)?;
                        b.clear();
                        let _ = give_back.send(b);
                    }
                    Job::Flush => {
                        out.flush()?;
                        let _ = flush_done.send(());
                    }
                }
            }
            out.flush()?;
            Ok(out)
        });
        BackgroundWriter {
            buf: Vec::with_capacity(BUFFER),
            jobs: Some(jobs),
            spare,
            flushed,
            thread: Some(thread),
        }
    }

    /// Writes what is left, waits for the thread, and gives back the destination (flushed).
    pub fn finish(mut self) -> io::Result<W> {
        self.hand_over()?;
        drop(self.jobs.take());
        self.join()
    }

    /// Sends the gathered bytes to the thread.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BUFFER));
        let full = std::mem::replace(&mut self.buf, next);
        self.send(Job::Data(full))
    }

    fn send(&mut self, job: Job) -> io::Result<()> {
        match self.jobs.as_ref().map(|j| j.send(job)) {
            Some(Ok(())) => Ok(()),
            // The thread stopped on an error: it is what joining gives.
            _ => Err(self.stopped()),
        }
    }

    /// Why the thread stopped, once it has.
    fn stopped(&mut self) -> io::Error {
        drop(self.jobs.take());
        match self.join() {
            Err(e) => e,
            Ok(_) => io::Error::other("the writing thread has ended"),
        }
    }

    fn join(&mut self) -> io::Result<W> {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Err(io::Error::other("the writing thread has ended")),
        }
    }
}

impl<W: Write + Send + 'static> Write for BackgroundWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let room = BUFFER - self.buf.len();
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.buf.extend_from_slice(now);
            bytes = rest;
            if self.buf.len() == BUFFER {
                self.hand_over()?;
            }
        }
        Ok(())
    }

    /// Hands over what is gathered and waits until the destination has written and flushed it.
    fn flush(&mut self) -> io::Result<()> {
        self.hand_over()?;
        self.send(Job::Flush)?;
        match self.flushed.recv() {
            Ok(()) => Ok(()),
            Err(_) => Err(self.stopped()),
        }
    }
}

impl<W: Write + Send + 'static> Drop for BackgroundWriter<W> {
    /// Unfinished (an error elsewhere): the thread writes what it was given and ends.
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A destination that keeps what it is given (shared, so the test can read it after the
    /// writer took it) and fails once it holds more than `fail_after` bytes.
    #[derive(Clone, Debug)]
    struct Kept {
        bytes: Arc<Mutex<Vec<u8>>>,
        flushes: Arc<Mutex<u32>>,
        fail_after: usize,
    }

    impl Write for Kept {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            let mut kept = self.bytes.lock().unwrap();
            if kept.len() + b.len() > self.fail_after {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            kept.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            *self.flushes.lock().unwrap() += 1;
            Ok(())
        }
    }

    fn kept(fail_after: usize) -> Kept {
        Kept {
            bytes: Arc::default(),
            flushes: Arc::default(),
            fail_after,
        }
    }

    #[test]
    fn the_bytes_arrive_whole_and_in_order_whatever_the_writes() {
        let dest = kept(usize::MAX);
        let mut w = BackgroundWriter::new(dest.clone());
        let mut expected = Vec::new();
        // Writes of many sizes: small ones, one larger than a buffer, ones across buffer ends.
        for i in 0..3000usize {
            let piece: Vec<u8> = (0..(i * 37) % 5000).map(|j| (i + j) as u8).collect();
            w.write_all(&piece).unwrap();
            expected.extend_from_slice(&piece);
            if i == 1500 {
                let big = vec![7u8; 3 * BUFFER + 11];
                w.write_all(&big).unwrap();
                expected.extend_from_slice(&big);
                w.flush().unwrap();
                // A flush returns once the destination has everything written before it.
                assert_eq!(dest.bytes.lock().unwrap().len(), expected.len());
            }
        }
        w.finish().unwrap();
        assert!(expected.len() > 8 * BUFFER);
        assert!(*dest.bytes.lock().unwrap() == expected);
        // The flush asked for, and the one that ends the stream.
        assert_eq!(*dest.flushes.lock().unwrap(), 2);
    }

    #[test]
    fn an_error_of_the_destination_comes_back_and_nothing_hangs() {
        let mut w = BackgroundWriter::new(kept(5 * BUFFER / 2));
        let chunk = vec![1u8; 64 * 1024];
        let mut failed = None;
        for _ in 0..200 {
            if let Err(e) = w.write_all(&chunk) {
                failed = Some(e);
                break;
            }
        }
        let e = failed
            .or_else(|| w.flush().err())
            .expect("the disk filled up");
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        // Once stopped, every later call says so too.
        assert!(w.write_all(&chunk).and_then(|()| w.flush()).is_err());

        // An error met at the last bytes comes back from finish.
        let mut w = BackgroundWriter::new(kept(10));
        w.write_all(b"more than ten bytes").unwrap();
        assert_eq!(w.finish().unwrap_err().kind(), io::ErrorKind::StorageFull);
    }
}
