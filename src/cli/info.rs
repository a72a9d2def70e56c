//! `tpb-emu info`: the adapters this machine offers and what `auto` picks.

use super::CliError;
use crate::device::gpu::BackendChoice;
use crate::device::gpu::context::{AdapterSummary, adapters, choose, instance};
use std::io::Write;

/// Prints one line per adapter, then the backend `--backend auto` would use.
pub fn run(out: &mut dyn Write) -> Result<(), CliError> {
    let list: Vec<AdapterSummary> = adapters(&instance())
        .iter()
        .map(AdapterSummary::of)
        .collect();
    let w = |out: &mut dyn Write, s: String| writeln!(out, "{s}").map_err(CliError::Stdout);
    if list.is_empty() {
        w(
            out,
            "adapters: none (install a Vulkan driver, e.g. mesa-vulkan-drivers)".into(),
        )?;
    } else {
        w(out, format!("adapters ({}):", list.len()))?;
    }
    for (i, a) in list.iter().enumerate() {
        w(
            out,
            format!(
                "  [{i}] {} | backend {} | type {:?} | driver {}{}",
                a.name,
                a.backend,
                a.device_type,
                a.driver,
                match &a.unsuitable {
                    Some(why) => format!(" | skipped: {why}"),
                    None => String::new(),
                }
            ),
        )?;
    }
    let auto = match choose(&list, BackendChoice::Auto) {
        Some(i) => format!("gpu [{i}] {}", list[i].name),
        None => {
            "cpu (no hardware adapter; software adapters run slower than the CPU backend)".into()
        }
    };
    w(out, format!("--backend auto: {auto}"))?;
    let gpu = match choose(&list, BackendChoice::Gpu) {
        Some(i) => format!("[{i}] {}", list[i].name),
        None => "none (exit 5)".into(),
    };
    w(out, format!("--backend gpu: {gpu}"))
}
