//! Ids encoded exactly as nsys writes them: `globalPid = hi16 << 48 | pid << 24`,
//! `globalTid = globalPid | tid` (see ../shared/docs/nsys-sqlite-schema.md). `hi16` is 1 in every
//! single-host export we have seen, and it is also the `vmId`/`globalVid` of the host's rows.

/// The top 16 bits of every serialized id of a single-host capture.
pub const HI16: i64 = 1;

/// `globalVid` of host-level rows (TARGET_INFO_SYSTEM_ENV, TARGET_INFO_GPU.vmId, ANALYSIS_DETAILS).
pub const GLOBAL_VID: i64 = HI16 << 48;

pub fn global_pid(pid: u32) -> i64 {
    (HI16 << 48) | (i64::from(pid & 0xFF_FFFF) << 24)
}

pub fn global_tid(pid: u32, tid: u32) -> i64 {
    global_pid(pid) | i64::from(tid & 0xFF_FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_real_exports() {
        // testcuda_report1: pid 17068, main thread tid 17068.
        assert_eq!(global_tid(17068, 17068), 281_761_330_250_412);
        // mfu_2gpu_before: PROCESSES row (281477392629760, 144, python3), main thread ...904.
        assert_eq!(global_pid(144), 281_477_392_629_760);
        assert_eq!(global_tid(144, 144), 281_477_392_629_904);
        assert_eq!(GLOBAL_VID, 281_474_976_710_656);
    }
}
