//! Writing a compiled program as a manifest folder that `tpb-emu run` and
//! `tpb-emu disasm` take (schema: `docs/programs.md`).

use crate::isa::enums::Engine;
use crate::npy::{NpyError, write_npy};
use crate::runtime::{Program, Role};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Writes `program` into `dir` (created if missing): `program.toml`, one
/// `<engine>.bin` per non-empty stream and `<name>.npy` for each input.
/// Returns the files written, the manifest first.
pub fn write_program(program: &Program, dir: &Path) -> Result<Vec<PathBuf>, NpyError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| NpyError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut toml = String::new();
    let _ = writeln!(
        toml,
        "# Written by tpb-emu pool2d --emit; run with `tpb-emu run`."
    );
    let _ = writeln!(toml, "arch = \"{}\"\n\n[streams]", program.arch.name());
    let mut files = Vec::new();
    for e in Engine::ALL {
        let s = program.stream(e);
        if s.is_empty() {
            continue;
        }
        let name = format!("{}.bin", e.name());
        let path = dir.join(&name);
        std::fs::write(&path, s).map_err(io(&path))?;
        let _ = writeln!(toml, "{} = \"{name}\"", e.name());
        files.push(path);
    }
    for v in &program.variables {
        let _ = writeln!(toml, "\n[[variable]]");
        let _ = writeln!(toml, "name = \"{}\"", v.name);
        let _ = writeln!(toml, "id = {}", v.id);
        let _ = writeln!(toml, "dtype = \"{}\"", v.dtype);
        let _ = writeln!(toml, "shape = {:?}", v.shape);
        let _ = writeln!(toml, "role = \"{}\"", v.role.name());
        if v.role == Role::Input {
            let name = format!("{}.npy", v.name);
            let path = dir.join(&name);
            let zeros;
            let data = match &v.init {
                Some(d) => d,
                None => {
                    zeros = vec![0u8; v.bytes().unwrap_or(0) as usize];
                    &zeros
                }
            };
            write_npy(&path, v.dtype, &v.shape, data)?;
            let _ = writeln!(toml, "file = \"{name}\"");
            files.push(path);
        }
    }
    let manifest = dir.join("program.toml");
    std::fs::write(&manifest, toml).map_err(io(&manifest))?;
    files.insert(0, manifest);
    Ok(files)
}
