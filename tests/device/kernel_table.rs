//! The kernel-table rows of Iota, Copy, Cast and Tensor-Tensor: they run
//! their op with EC-59's per-core kernel line, and random bytes carrying
//! their opcodes never panic (validated or not) and never touch memory when
//! they fail.

use crate::hand::{ARCH, row, row3, sbuf, trace_of};
use tpb_emu::device::dispatch::{self, DispatchError};
use tpb_emu::device::{CpuExecutor, DeviceMemory};
use tpb_emu::isa::enums::{AluOp, Dtype};
use tpb_emu::isa::record::Record;
use tpb_emu::isa::tensor::Data4d;
use tpb_emu::isa::{D4Iota, Opcode, Region, S3s3d3Tt, S4d4Tr};

/// EC-59: each core with lanes prints the frame around the kernel's line,
/// whose count is the core's lanes.
fn assert_frame(trace: &[String], opcode: u8, line: &str, channels: u32) {
    let mut want = vec![trace[0].clone()];
    for core in 0..8u32 {
        let lanes = channels.saturating_sub(16 * core).min(16);
        if lanes == 0 {
            break;
        }
        want.push(format!("P{core}: Entering Dispatch"));
        want.push(format!(
            "P{core}: In dispatch, CPU ID: {core}, got opcode 0x{opcode:x}."
        ));
        want.push(format!("P{core}: {line}{lanes}"));
        want.push(format!("P{core}: Exiting Dispatch"));
    }
    assert_eq!(trace, want);
}

#[test]
fn the_rows_print_ec59_kernel_lines() {
    let copy = S4d4Tr::new(
        Opcode::COPY,
        Dtype::FP32,
        Dtype::FP32,
        40,
        row(sbuf(0, 0), 4),
        row(sbuf(0, 64), 4),
    );
    assert_frame(&trace_of(&copy.encode()), 0x46, "Copy : num_chans = ", 40);
    let cast = S4d4Tr::new(
        Opcode::CAST,
        Dtype::FP32,
        Dtype::BFLOAT16,
        16,
        row(sbuf(0, 0), 4),
        row(sbuf(0, 64), 4),
    );
    assert_frame(&trace_of(&cast.encode()), 0x47, "Cast : num_chans = ", 16);
    let iota = D4Iota::new(
        Dtype::INT32,
        128,
        Data4d::new(0, [(4, 1), (1, 0), (1, 0), (1, 0)]),
        1,
        row(sbuf(0, 0), 4),
    );
    assert_frame(&trace_of(&iota.encode()), 0x7e, "Iota : num_chans = ", 128);
    let arith = S3s3d3Tt::new(
        Opcode::TENSOR_TENSOR_ARITH,
        AluOp::ADD_INT,
        Dtype::INT32,
        Dtype::INT32,
        Dtype::INT32,
        3,
        row3(sbuf(0, 0), 4),
        row3(sbuf(0, 16), 4),
        row3(sbuf(0, 32), 4),
    );
    assert_frame(
        &trace_of(&arith.encode()),
        0x41,
        "TensorTensorArith num_chans = ",
        3,
    );
    let bitvec = S3s3d3Tt::new(
        Opcode::TENSOR_TENSOR_BITVEC,
        AluOp::BITWISE_XOR,
        Dtype::UINT8,
        Dtype::UINT8,
        Dtype::UINT8,
        33,
        row3(sbuf(0, 0), 4),
        row3(sbuf(0, 16), 4),
        row3(sbuf(0, 32), 4),
    );
    assert_frame(
        &trace_of(&bitvec.encode()),
        0x51,
        "TensorTensorBitvec : num_chans = ",
        33,
    );
}

#[test]
fn unvalidated_kernel_records_run_only_when_valid() {
    // A valid Copy through the unvalidated entry runs; the same record with
    // a reserved byte set fails validation and leaves memory alone.
    let copy = S4d4Tr::new(
        Opcode::COPY,
        Dtype::UINT8,
        Dtype::UINT8,
        1,
        row(sbuf(0, 0), 2),
        row(sbuf(0, 8), 2),
    );
    let mut mem = DeviceMemory::new(ARCH);
    mem.region_bytes_mut(Region::Sbuf)[..2].copy_from_slice(&[7, 9]);
    let mut trace = Vec::new();
    dispatch::dispatch_unvalidated(
        0,
        &copy.encode(),
        &mut mem,
        &mut trace,
        &mut CpuExecutor::default(),
    )
    .expect("valid");
    assert_eq!(&mem.region_bytes(Region::Sbuf)[8..10], &[7, 9]);
    let mut bad = copy.encode();
    bad.0[40] = 1; // s4d4_tr_reserved_zero
    let before = mem.clone();
    let res =
        dispatch::dispatch_unvalidated(0, &bad, &mut mem, &mut trace, &mut CpuExecutor::default());
    assert!(matches!(res, Err(DispatchError::Invalid(_))), "{res:?}");
    assert!(mem.region_bytes(Region::Sbuf) == before.region_bytes(Region::Sbuf));
}

#[test]
fn random_bytes_with_the_new_opcodes_never_panic() {
    let mut rng = fastrand::Rng::with_seed(0x0046_0047);
    let mut ran = 0;
    let mut mem = DeviceMemory::new(ARCH);
    mem.fill(0x5A);
    let mut before = mem.clone();
    // Valid records of each kind, mutated in one or two bytes below.
    let templates = [
        S4d4Tr::new(
            Opcode::CAST,
            Dtype::FP32,
            Dtype::INT8,
            4,
            row(sbuf(0, 0), 8),
            row(sbuf(4, 64), 8),
        )
        .encode(),
        D4Iota::new(
            Dtype::FP16,
            4,
            Data4d::new(-5, [(8, 3), (1, 0), (1, 0), (1, 0)]),
            7,
            row(sbuf(2, 0), 8),
        )
        .encode(),
        S3s3d3Tt::new(
            Opcode::TENSOR_TENSOR_ARITH,
            AluOp::MULT,
            Dtype::BFLOAT16,
            Dtype::INT16,
            Dtype::FP32,
            4,
            row3(sbuf(0, 0), 8),
            row3(sbuf(0, 16), 8),
            row3(sbuf(0, 32), 8),
        )
        .encode(),
    ];
    for i in 0..4_000 {
        let mut r = Record([0; 64]);
        if i % 2 == 0 {
            r = templates[rng.usize(..templates.len())];
            for _ in 0..rng.usize(1..=2) {
                r.0[rng.usize(12..64)] = rng.u8(..);
            }
        } else {
            rng.fill(&mut r.0);
            r.0[0] = [0x46, 0x47, 0x7E, 0x41, 0x51][i % 5];
        }
        if rng.bool() {
            r.0[4..12].fill(0); // no events: more records reach the datapath
        }
        if rng.u8(0..3) == 0 {
            // Plausible small fields, so some records validate.
            match r.0[0] {
                0x46 | 0x47 => {
                    r.0[34] = rng.u8(1..=4);
                    r.0[35..44].fill(0);
                }
                0x7E => {
                    r.0[32] = 0;
                    r.0[34] = rng.u8(1..=4);
                    r.0[35] = 0;
                    r.0[40..44].fill(0);
                }
                _ => r.0[15] = rng.u8(1..=4),
            }
        }
        let mut trace = Vec::new();
        let res = dispatch::dispatch_unvalidated(
            i * 64,
            &r,
            &mut mem,
            &mut trace,
            &mut CpuExecutor::default(),
        );
        match res {
            Ok(()) => {
                ran += 1;
                before.clone_from(&mem);
            }
            Err(_) => assert!(
                mem.region_bytes(Region::Sbuf) == before.region_bytes(Region::Sbuf)
                    && mem.region_bytes(Region::Psum) == before.region_bytes(Region::Psum),
                "a failing record touched memory"
            ),
        }
    }
    eprintln!("{ran} random records ran");
}
