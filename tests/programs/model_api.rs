//! The model API (`tpb_emu::model`): a manifest and its packed NEFF load,
//! describe the same inputs and outputs, and run by name to the same bytes;
//! a replaced input changes the outputs as a hand computation says; every
//! wrong input is its own error kind.

use std::collections::HashMap;
use std::path::Path;
use tpb_emu::files::HostBytes;
use tpb_emu::isa::Dtype;
use tpb_emu::model::{
    InputFault, LoadError, LoadOptions, Model, ModelError, NameFault, RunOptions,
};

const MANIFEST: &str = "examples/program/program.toml";

fn manifest() -> Model {
    Model::open(Path::new(MANIFEST), &LoadOptions::default()).unwrap()
}

fn neff() -> Model {
    let program = tpb_emu::runtime::manifest::load(Path::new(MANIFEST)).unwrap();
    let bytes = tpb_emu::neff::pack::pack(&program, "program").unwrap();
    Model::from_neff_bytes(bytes, "program.neff", &LoadOptions::default()).unwrap()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn a_manifest_and_its_neff_describe_and_run_alike() {
    let (m, n) = (manifest(), neff());
    assert!(!m.is_neff() && n.is_neff());
    let names = |ts: Vec<tpb_emu::model::TensorInfo>| -> Vec<(String, Dtype, Vec<u64>, u64)> {
        ts.into_iter()
            .map(|t| (t.name, t.dtype, t.shape, t.bytes))
            .collect()
    };
    let want_out = vec![
        ("y_avg".to_string(), Dtype::FP32, vec![128, 4], 2048),
        ("y_max".to_string(), Dtype::BFLOAT16, vec![128, 4], 1024),
    ];
    assert_eq!(names(m.outputs()), want_out);
    assert_eq!(names(n.outputs()), want_out);
    let want_in = vec![("x".to_string(), Dtype::FP32, vec![128, 16], 8192)];
    assert_eq!(names(m.inputs()), want_in);
    assert_eq!(names(n.inputs()), want_in);
    assert!(m.files().len() >= 4, "{:?}", m.files());

    let x = std::fs::read("examples/program/x.npy").unwrap();
    let x = tpb_emu::npy::parse_npy(Path::new("x.npy"), &x)
        .unwrap()
        .data;
    let inputs = HashMap::from([("x".to_string(), x)]);
    let mut exec = tpb_emu::CpuExecutor::default();
    let a = m
        .run(&HashMap::new(), &mut exec, &RunOptions::default())
        .unwrap();
    let b = n.run(&inputs, &mut exec, &RunOptions::default()).unwrap();
    for name in ["y_avg", "y_max"] {
        assert_eq!(a.output(name), b.output(name), "{name}");
    }
    assert!(a.output("x").is_none(), "an input is not an output");
    assert_eq!(a.outputs().count(), 2);
}

#[test]
fn a_replaced_input_gives_the_hand_computed_pooling() {
    // The example pools each lane's 4x4 map 2x2: y_avg and y_max per quadrant.
    let x: Vec<f32> = (0..128 * 16)
        .map(|i| (i % 16) as f32 + (i / 16) as f32)
        .collect();
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let inputs = HashMap::from([("x".to_string(), HostBytes::from(bytes))]);
    for model in [manifest(), neff()] {
        let mut exec = tpb_emu::CpuExecutor::default();
        let run = model
            .run(&inputs, &mut exec, &RunOptions::default())
            .unwrap();
        let avg = f32s(run.output("y_avg").unwrap());
        for lane in [0usize, 5, 127] {
            let base = lane as f32;
            // Quadrant (0,0) holds 0,1,4,5 (+ lane): mean 2.5; (1,1): 10,11,14,15: 12.5.
            assert_eq!(avg[lane * 4], base + 2.5, "lane {lane}");
            assert_eq!(avg[lane * 4 + 3], base + 12.5, "lane {lane}");
        }
        // bf16 bits of the maxima: lane 0's quadrant (0,0) max is 5.0 = 0x40A0.
        let max = run.output("y_max").unwrap();
        assert_eq!(u16::from_le_bytes([max[0], max[1]]), 0x40A0);
    }
}

#[test]
fn each_wrong_input_is_its_own_error() {
    let n = neff();
    let mut exec = tpb_emu::CpuExecutor::default();
    let opts = RunOptions::default();
    match n.run(&HashMap::new(), &mut exec, &opts) {
        Err(ModelError::Name(m)) => {
            assert_eq!(m, NameFault::MissingInput("x".into()));
            assert!(m.to_string().contains("missing --input x"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    let short = HashMap::from([("x".to_string(), HostBytes::from(vec![0u8; 12]))]);
    match n.run(&short, &mut exec, &opts) {
        Err(ModelError::Input(m)) => {
            assert!(
                matches!(
                    m,
                    InputFault::Size {
                        got: 12,
                        bytes: 8192,
                        ..
                    }
                ),
                "{m:?}"
            );
            assert!(
                m.to_string().contains("12 bytes, the input needs 8192"),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
    let unknown = HashMap::from([("nope".to_string(), HostBytes::from(vec![0u8; 4]))]);
    match manifest().run(&unknown, &mut exec, &opts) {
        Err(ModelError::Name(m)) => {
            assert!(matches!(m, NameFault::UnknownInput { .. }), "{m:?}");
            assert!(
                m.to_string().contains("no input of that name (inputs: x)"),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
    let budget = RunOptions {
        max_work: 10,
        ..RunOptions::default()
    };
    assert!(matches!(
        manifest().run(&HashMap::new(), &mut exec, &budget),
        Err(ModelError::Run(_))
    ));
    match Model::from_neff_bytes(vec![0; 100], "junk.neff", &LoadOptions::default()) {
        Err(ModelError::Load(m)) => {
            assert!(matches!(*m, LoadError::Neff { .. }), "{m:?}");
            assert!(m.to_string().starts_with("junk.neff: "), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

/// The bindings share a model between threads (Python without the GIL,
/// libnrt's callers).
#[test]
fn a_model_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Model>();
    let m = std::sync::Arc::new(manifest());
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let m = m.clone();
            std::thread::spawn(move || {
                let mut exec = tpb_emu::CpuExecutor::default();
                let r = m.run(&HashMap::new(), &mut exec, &RunOptions::default());
                r.unwrap().output("y_avg").unwrap().to_vec()
            })
        })
        .collect();
    let outs: Vec<Vec<u8>> = runs.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(outs[0], outs[1]);
}
