//! What NCCL tells about a collective: from its kernel's name (collective, algorithm, protocol,
//! data type, reduction) and from the JSON payload of its NVTX range (message size, reduction,
//! communicator...). Values are small fixed codes so that every sink and every trace agree.

use serde::Serialize;

pub const COLLECTIVES: &[&str] = &[
    "AllReduce",
    "AllGather",
    "ReduceScatter",
    "Broadcast",
    "Reduce",
    "SendRecv",
    "Send",
    "Recv",
    "AllToAll",
    "Generic",
];
pub const ALGORITHMS: &[&str] = &[
    "RING",
    "TREE",
    "COLLNET_DIRECT",
    "COLLNET_CHAIN",
    "NVLS",
    "NVLS_TREE",
    "PAT",
    "COLLNET",
];
pub const PROTOCOLS: &[&str] = &["LL", "LL128", "SIMPLE"];
pub const OPS: &[&str] = &[
    "Sum",
    "Prod",
    "Max",
    "Min",
    "Avg",
    "PreMulSum",
    "SumPostDiv",
];
/// Canonical data type names; aliases below map onto them.
pub const DATATYPES: &[&str] = &[
    "i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2",
];
const DATATYPE_ALIASES: &[(&str, &str)] = &[
    ("int8_t", "i8"),
    ("int8", "i8"),
    ("char", "i8"),
    ("uint8_t", "u8"),
    ("uint8", "u8"),
    ("int32_t", "i32"),
    ("int", "i32"),
    ("int32", "i32"),
    ("uint32_t", "u32"),
    ("uint32", "u32"),
    ("int64_t", "i64"),
    ("int64", "i64"),
    ("uint64_t", "u64"),
    ("uint64", "u64"),
    ("half", "f16"),
    ("float16", "f16"),
    ("float", "f32"),
    ("float32", "f32"),
    ("double", "f64"),
    ("float64", "f64"),
    ("__nv_bfloat16", "bf16"),
    ("bfloat16", "bf16"),
    ("__nv_fp8_e4m3", "f8e4m3"),
    ("fp8e4m3", "f8e4m3"),
    ("__nv_fp8_e5m2", "f8e5m2"),
    ("fp8e5m2", "f8e5m2"),
];

/// 1-based code of `name` in `table` (0 = unknown).
fn code(table: &[&str], name: &str) -> u32 {
    table
        .iter()
        .position(|t| t.eq_ignore_ascii_case(name))
        .map_or(0, |i| i as u32 + 1)
}

pub fn datatype_code(name: &str) -> u32 {
    let n = name.trim().trim_start_matches("nccl");
    let canon = DATATYPE_ALIASES
        .iter()
        .find(|(a, _)| a.eq_ignore_ascii_case(n))
        .map_or(n, |(_, c)| c);
    code(DATATYPES, canon)
}

pub fn op_code(name: &str) -> u32 {
    code(OPS, name.trim().trim_start_matches("nccl"))
}

/// Codes (1-based, 0 = not in the name) parsed from an NCCL kernel name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NcclKernelInfo {
    pub collective: u32,
    pub algorithm: u32,
    pub protocol: u32,
    pub datatype: u32,
    pub op: u32,
}

/// Parses `ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...)` (NCCL ≥ 2.19) and the older
/// `ncclKernel_AllReduce_RING_LL_Sum_float(...)`; `None` if the name is not an NCCL kernel.
pub fn parse_kernel_name(name: &str) -> Option<NcclKernelInfo> {
    let base = name
        .trim_start_matches("void ")
        .split(['(', '<'])
        .next()?
        .trim();
    let rest = base
        .strip_prefix("ncclDevKernel_")
        .or_else(|| base.strip_prefix("ncclKernel_"))?;
    let tokens: Vec<&str> = rest.split('_').collect();
    let mut info = NcclKernelInfo {
        collective: code(COLLECTIVES, tokens.first()?),
        ..Default::default()
    };
    let mut i = 1;
    while i < tokens.len() {
        let t = tokens[i];
        // Two-word algorithms: COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE.
        if let Some(next) = tokens.get(i + 1) {
            let joined = format!("{t}_{next}");
            let c = code(ALGORITHMS, &joined);
            if c != 0 {
                info.algorithm = c;
                i += 2;
                continue;
            }
        }
        if let c @ 1.. = code(ALGORITHMS, t) {
            info.algorithm = c;
        } else if let c @ 1.. = code(PROTOCOLS, t) {
            info.protocol = c;
        } else if let c @ 1.. = code(OPS, t) {
            info.op = c;
        } else if let c @ 1.. = datatype_code(t) {
            info.datatype = c;
        }
        i += 1;
    }
    Some(info)
}

/// Fields of an NCCL NVTX payload that sinks use; each is `None` when absent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NcclPayload {
    pub message_bytes: Option<u64>,
    pub op: Option<u32>,
    pub datatype: Option<u32>,
    /// Root of a rooted collective or peer of send/recv.
    pub peer: Option<u64>,
    pub communicator: Option<u64>,
    pub ranks: Option<u64>,
    pub rank: Option<u64>,
}

/// Reads the JSON payload NCCL attaches to its NVTX ranges (keys as NCCL's payload schema names
/// them: "Message size [bytes]", "Reduction operation", "NCCL communicator ID", "No. of ranks",
/// "Rank", "Root", "Peer", "Data type"). Unknown keys are ignored; malformed JSON gives `None`.
pub fn parse_payload(json: &str) -> Option<NcclPayload> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let obj = v.as_object()?;
    let mut p = NcclPayload::default();
    let num = |v: &serde_json::Value| {
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    };
    for (k, v) in obj {
        let key = k.to_ascii_lowercase();
        if key.contains("size") {
            p.message_bytes = num(v);
        } else if key.contains("reduction") || key == "op" {
            p.op = v.as_str().map(op_code).filter(|c| *c != 0);
        } else if key.contains("type") {
            p.datatype = v.as_str().map(datatype_code).filter(|c| *c != 0);
        } else if key.contains("communicator") || key == "comm" {
            p.communicator = num(v).map(|c| c & ((1 << 53) - 1));
        } else if key.contains("no. of ranks") || key == "nranks" {
            p.ranks = num(v);
        } else if key.contains("root") || key.contains("peer") {
            p.peer = num(v);
        } else if key == "rank" {
            p.rank = num(v);
        }
    }
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_current_and_old_kernel_names() {
        let k = parse_kernel_name(
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
        )
        .unwrap();
        assert_eq!(
            (k.collective, k.op, k.datatype, k.algorithm, k.protocol),
            (1, 1, 10, 1, 1)
        );
        let k =
            parse_kernel_name("ncclKernel_AllReduce_RING_LL128_Sum_float(ncclWorkElem)").unwrap();
        assert_eq!(
            (k.collective, k.algorithm, k.protocol, k.op, k.datatype),
            (1, 1, 2, 1, 8)
        );
        let k = parse_kernel_name("ncclDevKernel_ReduceScatter_Sum_f32_COLLNET_DIRECT_SIMPLE(x)")
            .unwrap();
        assert_eq!((k.collective, k.algorithm, k.protocol), (3, 3, 3));
        let k = parse_kernel_name(
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)",
        )
        .unwrap();
        assert_eq!(
            k,
            NcclKernelInfo {
                collective: 6,
                ..Default::default()
            }
        );
        assert!(parse_kernel_name("gemm_kernel(float*)").is_none());
    }

    #[test]
    fn parses_nccl_payload_json() {
        let p = parse_payload(r#"{"NCCL communicator ID": 1234, "Message size [bytes]": 4194304, "Reduction operation": "ncclSum", "Data type": "ncclBfloat16"}"#).unwrap();
        assert_eq!(p.message_bytes, Some(4_194_304));
        assert_eq!(p.op, Some(1));
        assert_eq!(p.communicator, Some(1234));
        assert_eq!(p.datatype, Some(10));
        assert!(parse_payload("not json").is_none());
    }
}
