//! Scheduling helpers shared by the scenarios. GPU timings are planned first, from durations and
//! dependencies only, so they never depend on the seed; host threads then issue their calls with
//! seeded jitter, always ahead of the GPU work they launch (checked: a plan where the host would
//! lag is an error, not a silently different timeline).

use super::Op;
use crate::error::{Error, Result};
use crate::synth::builder::{ExportBuilder, Stream, Thread};
use crate::synth::rng::Rng;

/// Minimum time between the end of a launching call and the start of its GPU work.
pub const LAUNCH_LATENCY: i64 = 1_000;

/// A host thread issuing calls one after another.
pub struct Host {
    pub thread: Thread,
    pub t: i64,
    rng: Rng,
}

/// A CUDA API call that was issued.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub end: i64,
    pub corr: u64,
}

impl Host {
    pub fn new(thread: Thread, t: i64, seed: u64) -> Host {
        Host {
            thread,
            t,
            rng: Rng::new(seed ^ (u64::from(thread.tid) << 20)),
        }
    }

    /// Continues at the planned time `t`, which the jittered past must not have passed: this is
    /// what keeps the timeline after a synchronisation independent of the seed.
    pub fn resume_at(&mut self, b: &ExportBuilder, t: i64) -> Result<()> {
        if self.t > t {
            return Err(lag(b, "the next phase", self.t, t));
        }
        self.t = t;
        Ok(())
    }

    /// Lets `lo..=hi` ns pass (Python between calls).
    pub fn pause(&mut self, lo: i64, hi: i64) -> i64 {
        self.t += self.rng.range(lo, hi);
        self.t
    }

    /// Issues the API call `name` lasting `lo..=hi` ns, after a short gap.
    pub fn call(&mut self, b: &mut ExportBuilder, name: &str, lo: i64, hi: i64) -> Call {
        let start = self.pause(800, 2_500);
        let dur = self.rng.range(lo, hi);
        let corr = b.correlation(self.thread.pid);
        b.runtime_call(self.thread, start, dur, name, corr);
        self.t = start + dur;
        Call {
            end: start + dur,
            corr,
        }
    }

    /// A call that blocks until `until` (a synchronisation).
    pub fn blocking_call(&mut self, b: &mut ExportBuilder, name: &str, until: i64) -> Result<Call> {
        let start = self.pause(800, 2_500);
        if until <= start {
            return Err(lag(b, name, start, until));
        }
        let corr = b.correlation(self.thread.pid);
        b.runtime_call(self.thread, start, until - start, name, corr);
        self.t = until;
        Ok(Call { end: until, corr })
    }

    /// Launches `op`'s kernel (through its API), whose GPU execution was planned at `gpu_start`
    /// for `dur`.
    pub fn launch(
        &mut self,
        b: &mut ExportBuilder,
        s: Stream,
        gpu_start: i64,
        dur: i64,
        op: &Op,
    ) -> Result<Call> {
        let c = self.call(b, op.api, 3_000, 9_000);
        ahead(b, &op.k.short, c, gpu_start)?;
        b.kernel(s, gpu_start, dur, &op.k, op.grid, op.block, c.corr, None)?;
        Ok(c)
    }
}

fn lag(b: &ExportBuilder, what: &str, host: i64, gpu: i64) -> Error {
    Error::BadData {
        file: b.label().to_owned(),
        why: format!(
            "scenario plan error: host issues {what} at {host} ns, after its GPU work at {gpu} ns"
        ),
    }
}

/// Checks that GPU work planned at `gpu_start` comes after the call that launched it.
pub fn ahead(b: &ExportBuilder, what: &str, c: Call, gpu_start: i64) -> Result<()> {
    if gpu_start < c.end + LAUNCH_LATENCY {
        return Err(lag(b, what, c.end, gpu_start));
    }
    Ok(())
}

/// The planned occupancy of one GPU stream: operations run in issue order, each when the
/// stream is free and its inputs are ready.
#[derive(Clone, Copy, Debug)]
pub struct Lane {
    pub free: i64,
}

impl Lane {
    pub fn new(t: i64) -> Lane {
        Lane { free: t }
    }

    /// Places an operation of `dur` ns ready at `ready`; returns its start.
    pub fn place(&mut self, ready: i64, dur: i64) -> i64 {
        let start = self.free.max(ready);
        self.free = start + dur;
        start
    }
}
