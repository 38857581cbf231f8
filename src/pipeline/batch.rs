//! Records in batches of bytes, for a reading side and a writing side that share no memory (the
//! browser's reader and writer workers): the names interned since the previous batch, then the
//! records, in postcard's compact encoding of the model types. The writing side appends the
//! names to its copy of the table in the same order, so every name id means the same on both.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::Record;

#[derive(Serialize)]
struct Out<'a> {
    names: &'a [String],
    records: &'a [Record],
}

#[derive(Deserialize)]
struct In {
    names: Vec<String>,
    records: Vec<Record>,
}

/// The bytes of a batch: `names` (interned since the last batch), then `records`.
pub fn encode(names: &[String], records: &[Record]) -> Result<Vec<u8>> {
    postcard::to_allocvec(&Out { names, records }).map_err(|e| {
        Error::Usage(format!(
            "internal error: a batch of records could not be encoded: {e}"
        ))
    })
}

/// A batch's names and records.
pub fn decode(bytes: &[u8]) -> Result<(Vec<String>, Vec<Record>)> {
    let batch: In = postcard::from_bytes(bytes).map_err(|e| {
        Error::Usage(format!(
            "internal error: a batch of records could not be decoded: {e}"
        ))
    })?;
    Ok((batch.names, batch.records))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    #[test]
    fn every_kind_of_record_comes_back_as_it_went() {
        let t = ThreadId(3);
        let records = vec![
            Record::Gpu(GpuOp {
                thread: t,
                device: 1,
                start: 10,
                end: u64::MAX,
                next_on_stream: Some(12),
                correlation_id: 7,
                graph_node_id: None,
                kind: GpuOpKind::Kernel(Kernel {
                    name: NameId(4),
                    short_name: NameId(5),
                    class: KernelClass::Communication,
                    grid: [1, 2, 3],
                    block: [4, 5, 6],
                    registers_per_thread: 32,
                    static_shared_memory: 0,
                    dynamic_shared_memory: 48,
                    local_memory_per_thread: 0,
                    local_memory_total: 1 << 40,
                }),
            }),
            Record::Gpu(GpuOp {
                thread: t,
                device: 0,
                start: 1,
                end: 2,
                next_on_stream: None,
                correlation_id: 0,
                graph_node_id: Some(99),
                kind: GpuOpKind::Memcpy(Memcpy {
                    copy_kind: 2,
                    bytes: 1024,
                    src_kind: Some(1),
                    dst_kind: None,
                }),
            }),
            Record::Host(HostCall {
                thread: t,
                start: 5,
                end: 6,
                next_on_thread: Some(9),
                activity: HostActivity::MpiCollective,
                kind: HostCallKind::Mpi(MpiCall {
                    name: NameId(8),
                    class: MpiClass::Collective,
                    bytes_sent: Some(64),
                    bytes_received: None,
                    peer: Some(-1),
                    tag: None,
                    root: Some(0),
                    communicator: Some(i64::MIN),
                    requests: 2,
                }),
            }),
            Record::Nvtx(NvtxRange {
                thread: t,
                end_thread: ThreadId(4),
                start: 3,
                end: 30,
                kind: NvtxRangeKind::PushPop,
                domain: 2,
                name: NameId(1),
                category: Some(NameId(2)),
                color: None,
                unterminated: true,
                payload_json: Some("{\"NCCL\": \"é\"}".into()),
            }),
            Record::Mark(NvtxMark {
                thread: t,
                time: 4,
                domain: 0,
                name: NameId(0),
            }),
            Record::Link(Link {
                from: t,
                send: 5,
                to: ThreadId(9),
                recv: 8,
                bytes: 0,
                kind: LinkKind::Launch,
            }),
            Record::Sched(CpuRun {
                thread: t,
                start: 0,
                end: 100,
                cpu: 7,
            }),
        ];
        let names = vec!["kernel".to_owned(), "".to_owned(), "ñame".to_owned()];
        let bytes = encode(&names, &records).unwrap();
        assert_eq!(decode(&bytes).unwrap(), (names, records));
        assert!(decode(&bytes[..bytes.len() / 2]).is_err());
        assert!(decode(&[]).is_err());
    }
}
