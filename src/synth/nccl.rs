//! NCCL's NVTX instrumentation as nsys records it: ranges in the `NCCL` domain named after the API
//! function (`ncclAllReduce`, registered strings), payload schemas registered per process, and the
//! payload rendered to `jsonText`. Field names, entry types and schema ids are those of NCCL's
//! `nvtx_payload_schemas.h` / `nvtx.h` (NCCL 2.25), as they appear in mfu_2gpu_before.sqlite's
//! NVTX_PAYLOAD_SCHEMA_ENTRIES. NCCL's payloads have no datatype field: the datatype is in the
//! kernel name.

use super::rows::PayloadSchema;

/// NVTX domain id nsys gives the `NCCL` domain (the first domain the process creates).
pub const DOMAIN_ID: i64 = 1;

/// `NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START`.
const STATIC_START: i64 = 1 << 24;
/// Payload entry types (NVTX payload extension): uint64, size_t, int, and NCCL's reduction-op enum.
const T_UINT64: i64 = 18;
const T_SIZE: i64 = 22;
const T_INT: i64 = 5;
const T_REDOP: i64 = 16 + STATIC_START;

const COMM: &str = "NCCL communicator ID";
const MSG: &str = "Message size [bytes]";
const REDOP: &str = "Reduction operation";

/// An NCCL API call that carries a payload, with its static schema id (`NVTX_SID_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    AllGather,
    AllReduce,
    ReduceScatter,
    Send,
    Recv,
    CommInitRankConfig,
}

impl Call {
    fn sid(self) -> i64 {
        match self {
            Call::AllGather => 4,
            Call::AllReduce => 5,
            Call::ReduceScatter => 7,
            Call::Send => 9,
            Call::Recv => 10,
            Call::CommInitRankConfig => 11,
        }
    }

    /// The NVTX range name: the API function.
    pub fn range_name(self) -> &'static str {
        match self {
            Call::AllGather => "ncclAllGather",
            Call::AllReduce => "ncclAllReduce",
            Call::ReduceScatter => "ncclReduceScatter",
            Call::Send => "ncclSend",
            Call::Recv => "ncclRecv",
            Call::CommInitRankConfig => "ncclCommInitRankConfig",
        }
    }

    /// The schema as NVTX_PAYLOAD_SCHEMAS/ENTRIES hold it.
    pub fn schema(self) -> PayloadSchema {
        let entries: Vec<(i64, &'static str, i64)> = match self {
            Call::AllGather => vec![(T_UINT64, COMM, 0), (T_SIZE, MSG, 8)],
            Call::AllReduce | Call::ReduceScatter => {
                vec![(T_UINT64, COMM, 0), (T_SIZE, MSG, 8), (T_REDOP, REDOP, 16)]
            }
            Call::Send | Call::Recv => vec![
                (T_UINT64, COMM, 0),
                (T_SIZE, MSG, 8),
                (T_INT, "Peer rank", 16),
            ],
            Call::CommInitRankConfig => vec![
                (T_UINT64, COMM, 0),
                (T_INT, "No. of ranks", 8),
                (T_INT, "Rank", 12),
                (T_INT, "CUDA device", 16),
            ],
        };
        let payload_size = if self == Call::AllGather { 16 } else { 24 };
        PayloadSchema {
            domain_id: DOMAIN_ID,
            schema_id: STATIC_START + self.sid(),
            payload_size,
            entries,
        }
    }
}

/// `jsonText` of a collective with a reduction (`op` is NCCL's enum label, e.g. `Sum`).
pub fn reduce_payload(comm: u64, bytes: u64, op: &str) -> String {
    format!("{{\"{COMM}\":{comm},\"{MSG}\":{bytes},\"{REDOP}\":\"{op}\"}}")
}

/// `jsonText` of an AllGather.
pub fn gather_payload(comm: u64, bytes: u64) -> String {
    format!("{{\"{COMM}\":{comm},\"{MSG}\":{bytes}}}")
}

/// `jsonText` of a Send or Recv.
pub fn p2p_payload(comm: u64, bytes: u64, peer: u32) -> String {
    format!("{{\"{COMM}\":{comm},\"{MSG}\":{bytes},\"Peer rank\":{peer}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_ids_and_payloads() {
        // Schema ids and sizes seen in mfu_2gpu_before.sqlite.
        assert_eq!(Call::Send.schema().schema_id, 16_777_225);
        assert_eq!(Call::ReduceScatter.schema().entries[2].0, 16_777_232);
        assert_eq!(Call::AllGather.schema().payload_size, 16);
        let j: serde_json::Value =
            serde_json::from_str(&reduce_payload(7, 26_214_400, "Sum")).unwrap();
        assert_eq!(j["Message size [bytes]"], 26_214_400);
        assert_eq!(j["Reduction operation"], "Sum");
        let j: serde_json::Value = serde_json::from_str(&p2p_payload(7, 64, 3)).unwrap();
        assert_eq!(j["Peer rank"], 3);
        assert_eq!(j["NCCL communicator ID"], 7);
    }
}
