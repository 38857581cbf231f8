//! nsys packs process and thread ids into one integer:
//! `globalTid = hi16 << 48 | pid << 24 | tid` and `globalPid = hi16 << 48 | pid << 24`.
//! The top 16 bits tell machines/VMs apart; we keep them in keys but never interpret them.

/// A GPU stream key: (globalPid, deviceId, contextId, streamId).
pub type StreamKey = (i64, u32, u32, u32);

pub fn pid_of(global: i64) -> u32 {
    ((global >> 24) & 0xFF_FFFF) as u32
}

pub fn tid_of(global_tid: i64) -> u32 {
    (global_tid & 0xFF_FFFF) as u32
}

/// The process key of a globalTid: the globalPid it belongs to.
pub fn process_key(global: i64) -> i64 {
    global & !0xFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_documented_example() {
        // From testcuda_report1: 0x0001_0042AC_0042AC
        let g = 281761330250412_i64;
        assert_eq!(pid_of(g), 17068);
        assert_eq!(tid_of(g), 17068);
        assert_eq!(process_key(g), 281761330233344);
    }
}
