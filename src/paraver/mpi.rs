//! Extrae's MPI encoding, so that the POP/BSC MPI cfgs work on our traces: one event type per MPI
//! call group and Extrae's value per call (facts of the format, as Paraver's MPI views expect them).

use crate::model::MpiClass;

pub const MPI_POINT_TO_POINT: u32 = 50_000_001;
pub const MPI_COLLECTIVE: u32 = 50_000_002;
pub const MPI_OTHER: u32 = 50_000_003;
pub const MPI_ONE_SIDED: u32 = 50_000_004;
pub const MPI_IO: u32 = 50_000_005;
/// Bytes sent / received by a collective (Extrae's "Send/Recv Size in MPI Global OP").
pub const MPI_GLOBAL_SEND_SIZE: u32 = 50_100_001;
pub const MPI_GLOBAL_RECV_SIZE: u32 = 50_100_002;
/// Bytes of a point-to-point call and its peer rank + 1 (prvsight additions; nsys ≥ 2023 only).
pub const MPI_P2P_SIZE: u32 = 50_100_003;
pub const MPI_P2P_PEER: u32 = 50_100_004;

/// Values of MPI calls without an Extrae number: this base + interned name id.
pub const UNKNOWN_MPI_BASE: u64 = 1000;

/// (Extrae value, call name) for the calls Extrae numbers.
pub const MPI_VALUES: &[(u64, &str)] = &[
    (1, "MPI_Send"),
    (2, "MPI_Recv"),
    (3, "MPI_Isend"),
    (4, "MPI_Irecv"),
    (5, "MPI_Wait"),
    (6, "MPI_Waitall"),
    (7, "MPI_Bcast"),
    (8, "MPI_Barrier"),
    (9, "MPI_Reduce"),
    (10, "MPI_Allreduce"),
    (11, "MPI_Alltoall"),
    (12, "MPI_Alltoallv"),
    (13, "MPI_Gather"),
    (14, "MPI_Gatherv"),
    (15, "MPI_Scatter"),
    (16, "MPI_Scatterv"),
    (17, "MPI_Allgather"),
    (18, "MPI_Allgatherv"),
    (19, "MPI_Comm_rank"),
    (20, "MPI_Comm_size"),
    (21, "MPI_Comm_create"),
    (22, "MPI_Comm_dup"),
    (23, "MPI_Comm_split"),
    (24, "MPI_Comm_group"),
    (25, "MPI_Comm_free"),
    (26, "MPI_Comm_remote_group"),
    (27, "MPI_Comm_remote_size"),
    (28, "MPI_Comm_test_inter"),
    (29, "MPI_Comm_compare"),
    (30, "MPI_Scan"),
    (31, "MPI_Init"),
    (32, "MPI_Finalize"),
    (33, "MPI_Bsend"),
    (34, "MPI_Ssend"),
    (35, "MPI_Rsend"),
    (36, "MPI_Ibsend"),
    (37, "MPI_Issend"),
    (38, "MPI_Irsend"),
    (39, "MPI_Test"),
    (40, "MPI_Cancel"),
    (41, "MPI_Sendrecv"),
    (42, "MPI_Sendrecv_replace"),
    (43, "MPI_Cart_create"),
    (44, "MPI_Cart_shift"),
    (45, "MPI_Cart_coords"),
    (46, "MPI_Cart_get"),
    (47, "MPI_Cart_map"),
    (48, "MPI_Cart_rank"),
    (49, "MPI_Cart_sub"),
    (50, "MPI_Cartdim_get"),
    (51, "MPI_Dims_create"),
    (52, "MPI_Graph_get"),
    (53, "MPI_Graph_map"),
    (54, "MPI_Graph_create"),
    (55, "MPI_Graph_neighbors"),
    (56, "MPI_Graphdims_get"),
    (57, "MPI_Graph_neighbors_count"),
    (58, "MPI_Topo_test"),
    (59, "MPI_Waitany"),
    (60, "MPI_Waitsome"),
    (61, "MPI_Probe"),
    (62, "MPI_Iprobe"),
    (63, "MPI_Win_create"),
    (64, "MPI_Win_free"),
    (65, "MPI_Put"),
    (66, "MPI_Get"),
    (67, "MPI_Accumulate"),
    (68, "MPI_Win_fence"),
    (69, "MPI_Win_start"),
    (70, "MPI_Win_complete"),
    (71, "MPI_Win_post"),
    (72, "MPI_Win_wait"),
    (73, "MPI_Win_test"),
    (74, "MPI_Win_lock"),
    (75, "MPI_Win_unlock"),
    (76, "MPI_Pack"),
    (77, "MPI_Unpack"),
    (78, "MPI_Op_create"),
    (79, "MPI_Op_free"),
    (80, "MPI_Reduce_scatter"),
    (81, "MPI_Attr_delete"),
    (82, "MPI_Attr_get"),
    (83, "MPI_Attr_put"),
    (84, "MPI_Group_difference"),
    (85, "MPI_Group_excl"),
    (86, "MPI_Group_free"),
    (87, "MPI_Group_incl"),
    (88, "MPI_Group_intersection"),
    (89, "MPI_Group_rank"),
    (90, "MPI_Group_range_excl"),
    (91, "MPI_Group_range_incl"),
    (92, "MPI_Group_size"),
    (93, "MPI_Group_translate_ranks"),
    (94, "MPI_Group_union"),
    (95, "MPI_Group_compare"),
    (96, "MPI_Intercomm_create"),
    (97, "MPI_Intercomm_merge"),
    (98, "MPI_Keyval_free"),
    (99, "MPI_Keyval_create"),
    (100, "MPI_Abort"),
    (101, "MPI_Error_class"),
    (102, "MPI_Errhandler_create"),
    (103, "MPI_Errhandler_free"),
    (104, "MPI_Errhandler_get"),
    (105, "MPI_Error_string"),
    (106, "MPI_Errhandler_set"),
    (107, "MPI_Get_processor_name"),
    (108, "MPI_Initialized"),
    (109, "MPI_Wtick"),
    (110, "MPI_Wtime"),
    (111, "MPI_Address"),
    (112, "MPI_Bsend_init"),
    (113, "MPI_Buffer_attach"),
    (114, "MPI_Buffer_detach"),
    (115, "MPI_Request_free"),
    (116, "MPI_Recv_init"),
    (117, "MPI_Send_init"),
    (118, "MPI_Get_count"),
    (119, "MPI_Get_elements"),
    (120, "MPI_Pack_size"),
    (121, "MPI_Rsend_init"),
    (122, "MPI_Ssend_init"),
    (123, "MPI_Start"),
    (124, "MPI_Startall"),
    (125, "MPI_Testall"),
    (126, "MPI_Testany"),
    (127, "MPI_Test_cancelled"),
    (128, "MPI_Testsome"),
    (129, "MPI_Type_commit"),
    (130, "MPI_Type_contiguous"),
    (131, "MPI_Type_extent"),
    (132, "MPI_Type_free"),
    (133, "MPI_Type_hindexed"),
    (134, "MPI_Type_hvector"),
    (135, "MPI_Type_indexed"),
    (136, "MPI_Type_lb"),
    (137, "MPI_Type_size"),
    (138, "MPI_Type_struct"),
    (139, "MPI_Type_ub"),
];

/// Extrae's value for an MPI call name, if it has one.
pub fn extrae_value(name: &str) -> Option<u64> {
    MPI_VALUES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
        .map(|(v, _)| *v)
}

pub fn extrae_label(value: u64) -> Option<&'static str> {
    MPI_VALUES
        .iter()
        .find(|(v, _)| *v == value)
        .map(|(_, n)| *n)
}

/// The Extrae event type an MPI call belongs to.
pub fn type_of(name: &str, class: MpiClass) -> u32 {
    let n = name.to_ascii_lowercase();
    if n.starts_with("mpi_file") {
        return MPI_IO;
    }
    if n.starts_with("mpi_win")
        || matches!(
            n.as_str(),
            "mpi_put" | "mpi_get" | "mpi_accumulate" | "mpi_rput" | "mpi_rget"
        )
    {
        return MPI_ONE_SIDED;
    }
    match class {
        MpiClass::PointToPoint | MpiClass::StartWait => MPI_POINT_TO_POINT,
        MpiClass::Collective => MPI_COLLECTIVE,
        MpiClass::Other => {
            let p2p = [
                "send", "recv", "wait", "test", "probe", "cancel", "request", "start",
            ];
            let bare = n.trim_start_matches("mpi_");
            if crate::model::classify::mpi_activity(name, class)
                == crate::model::HostActivity::MpiCollective
            {
                MPI_COLLECTIVE
            } else if p2p.iter().any(|k| bare.contains(k)) {
                MPI_POINT_TO_POINT
            } else {
                MPI_OTHER
            }
        }
    }
}

pub fn type_label(t: u32) -> Option<&'static str> {
    Some(match t {
        MPI_POINT_TO_POINT => "MPI Point-to-point",
        MPI_COLLECTIVE => "MPI Collective Comm",
        MPI_OTHER => "MPI Other",
        MPI_ONE_SIDED => "MPI One-sided",
        MPI_IO => "MPI I/O",
        MPI_GLOBAL_SEND_SIZE => "Send Size in MPI Global OP",
        MPI_GLOBAL_RECV_SIZE => "Recv Size in MPI Global OP",
        MPI_P2P_SIZE => "MPI point-to-point size [bytes]",
        MPI_P2P_PEER => "MPI point-to-point peer rank + 1",
        _ => return None,
    })
}
