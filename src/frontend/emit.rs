//! Writing a program as a manifest folder that `tpb-emu run` and
//! `tpb-emu disasm` take (schema: `docs/programs.md`): `pool2d --emit` and
//! `lower --out` use it.

use crate::files::{FileError, Outputs};
use crate::isa::enums::Engine;
use crate::npy::npy_header;
use crate::runtime::{Program, Role};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Writes `program` into `dir` (created if missing) at once: `program.toml`,
/// one `<engine>.bin` per non-empty stream and `<name>.npy` for each input.
/// Returns the files written, the manifest first.
pub fn write_program(program: &Program, dir: &Path) -> Result<Vec<PathBuf>, FileError> {
    let mut outs = Outputs::new();
    let files = write_program_into(program, dir, "pool2d --emit", &mut outs)?;
    outs.commit()?;
    Ok(files)
}

/// The files [`write_program_into`] writes for `program` in `dir`, the
/// manifest first (for the path-collision check before anything runs).
pub fn program_files(program: &Program, dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![dir.join("program.toml")];
    for e in Engine::ALL {
        if !program.stream(e).is_empty() {
            files.push(dir.join(format!("{}.bin", e.name())));
        }
    }
    for v in program.variables.iter().filter(|v| v.role == Role::Input) {
        files.push(dir.join(format!("{}.npy", v.name)));
    }
    files
}

/// [`write_program`] as part of the transaction `outs` (nothing appears
/// before `outs` commits). `by` names the command in the manifest's comment.
/// Declared exit points ([`Program::exits`]) are written as `[exits]`.
pub fn write_program_into(
    program: &Program,
    dir: &Path,
    by: &str,
    outs: &mut Outputs,
) -> Result<Vec<PathBuf>, FileError> {
    let mut toml = String::new();
    let _ = writeln!(toml, "# Written by tpb-emu {by}; run with `tpb-emu run`.");
    let _ = writeln!(toml, "arch = \"{}\"\n\n[streams]", program.arch.name());
    let mut files = Vec::new();
    for e in Engine::ALL {
        let s = program.stream(e);
        if s.is_empty() {
            continue;
        }
        let name = format!("{}.bin", e.name());
        let path = dir.join(&name);
        outs.write(&path, s)?;
        let _ = writeln!(toml, "{} = \"{name}\"", e.name());
        files.push(path);
    }
    if program.exits.iter().any(|x| !x.is_empty()) {
        let _ = writeln!(
            toml,
            "\n# EC-29: exit points of the streams above (byte offsets).\n[exits]"
        );
        for e in Engine::ALL {
            let x = &program.exits[e as usize];
            if !x.is_empty() {
                let _ = writeln!(toml, "{} = {x:?}", e.name());
            }
        }
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
                Some(d) => &d[..],
                None => {
                    zeros = vec![0u8; v.bytes().unwrap_or(0) as usize];
                    &zeros
                }
            };
            let header = npy_header(v.dtype, &v.shape).map_err(|why| FileError::Io {
                path: path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, why),
            })?;
            outs.write_parts(&path, &[&header, data])?;
            let _ = writeln!(toml, "file = \"{name}\"");
            files.push(path);
        }
    }
    let manifest = dir.join("program.toml");
    outs.write(&manifest, toml.as_bytes())?;
    files.insert(0, manifest);
    Ok(files)
}
