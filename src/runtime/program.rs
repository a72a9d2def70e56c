//! A program in host memory: engine streams and device-DRAM variables, and
//! the variables' layout in DRAM (EC-18).

use super::{DRAM_ALIGN, MAX_DRAM_BYTES, MAX_VARIABLE_ID};
use crate::files::HostBytes;
use crate::isa::enums::{Dtype, Engine};
use crate::isa::record::Record;
use crate::limits::Arch;
use std::collections::HashMap;
use std::fmt;

/// What a variable is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Filled from a file before the run.
    Input,
    /// Written to a file after the run (zero at start).
    Output,
    /// Neither loaded nor saved (zero at start).
    Scratch,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 3] = [Role::Input, Role::Output, Role::Scratch];

    /// The manifest's name.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::Scratch => "scratch",
        }
    }

    /// Parses a name as written by [`Role::name`].
    pub fn from_name(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// A device-DRAM variable (EC-18): a named, typed array with its own byte
/// range in DRAM, addressed by VAR_ID ADDR8s (EC-22).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Unique name; outputs are written as `<name>.npy`.
    pub name: String,
    /// Unique id, at most [`MAX_VARIABLE_ID`].
    pub id: u32,
    /// Element type (any dtype with a size).
    pub dtype: Dtype,
    /// Shape, C order; at least one axis, every axis >= 1.
    pub shape: Vec<u64>,
    /// Input, output or scratch.
    pub role: Role,
    /// Initial bytes (little-endian elements, C order) for inputs; zero when
    /// `None`. Shared bytes (a mapped `.npy`) become device DRAM without a copy.
    pub init: Option<HostBytes>,
}

impl Variable {
    /// An input variable holding `data` (little-endian elements, C order).
    pub fn input(name: &str, id: u32, dtype: Dtype, shape: &[u64], data: Vec<u8>) -> Variable {
        Variable::input_bytes(name, id, dtype, shape, data.into())
    }

    /// [`Variable::input`] of bytes that may be shared with a mapped file.
    pub fn input_bytes(
        name: &str,
        id: u32,
        dtype: Dtype,
        shape: &[u64],
        data: HostBytes,
    ) -> Variable {
        Variable {
            name: name.into(),
            id,
            dtype,
            shape: shape.to_vec(),
            role: Role::Input,
            init: Some(data),
        }
    }

    /// A zero-initialised variable of `role`.
    pub fn zeroed(name: &str, id: u32, dtype: Dtype, shape: &[u64], role: Role) -> Variable {
        Variable {
            name: name.into(),
            id,
            dtype,
            shape: shape.to_vec(),
            role,
            init: None,
        }
    }

    /// An output variable (zero at start).
    pub fn output(name: &str, id: u32, dtype: Dtype, shape: &[u64]) -> Variable {
        Variable::zeroed(name, id, dtype, shape, Role::Output)
    }

    /// Elements, or `None` on overflow.
    pub fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// Size in bytes, or `None` on overflow or a dtype without a size.
    pub fn bytes(&self) -> Option<u64> {
        self.elements()?.checked_mul(self.dtype.size()? as u64)
    }
}

/// A variable that cannot be laid out: which one and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariableError {
    /// Index in [`Program::variables`] (0-based).
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Why.
    pub fault: VariableFault,
}

/// What is wrong with a variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VariableFault {
    /// The name is empty or not a plain file-name stem.
    Name,
    /// The name is used by an earlier variable.
    DuplicateName {
        /// Index of the earlier variable.
        first: usize,
    },
    /// The id is above [`MAX_VARIABLE_ID`].
    IdRange(u32),
    /// The id is used by an earlier variable.
    DuplicateId {
        /// The id.
        id: u32,
        /// Index of the earlier variable.
        first: usize,
    },
    /// INVALID or a byte that is not a dtype.
    Dtype(Dtype),
    /// No axes, or an axis of 0.
    Shape,
    /// More DRAM than [`MAX_DRAM_BYTES`] in all.
    TooLarge,
    /// `init` does not hold exactly the variable's bytes.
    InitLength {
        /// Bytes given.
        got: usize,
        /// Bytes the variable holds.
        want: u64,
    },
}

impl VariableFault {
    /// The manifest key the fault is about.
    pub const fn key(&self) -> &'static str {
        match self {
            VariableFault::Name | VariableFault::DuplicateName { .. } => "name",
            VariableFault::IdRange(_) | VariableFault::DuplicateId { .. } => "id",
            VariableFault::Dtype(_) => "dtype",
            VariableFault::Shape | VariableFault::TooLarge => "shape",
            VariableFault::InitLength { .. } => "file",
        }
    }
}

impl fmt::Display for VariableFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariableFault::Name => f.write_str(
                "a name is 1 to 64 of A-Z a-z 0-9 _ - . and does not start with `.` or `-`",
            ),
            VariableFault::DuplicateName { first } => {
                write!(f, "the name is already used by variable #{}", first + 1)
            }
            VariableFault::IdRange(id) => {
                write!(f, "id {id} does not fit 24 bits (max {MAX_VARIABLE_ID})")
            }
            VariableFault::DuplicateId { id, first } => {
                write!(f, "id {id} is already used by variable #{}", first + 1)
            }
            VariableFault::Dtype(d) => write!(f, "dtype {d} has no element size"),
            VariableFault::Shape => f.write_str("a shape has at least one axis, each >= 1"),
            VariableFault::TooLarge => write!(
                f,
                "the variables need more than {MAX_DRAM_BYTES} bytes of DRAM in all"
            ),
            VariableFault::InitLength { got, want } => {
                write!(f, "{got} initial bytes for a variable of {want} bytes")
            }
        }
    }
}

impl fmt::Display for VariableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "variable #{} (`{}`): {}: {}",
            self.index + 1,
            self.name,
            self.fault.key(),
            self.fault
        )
    }
}

impl std::error::Error for VariableError {}

/// True for a name that is safe as a file-name stem.
fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with(['.', '-'])
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// A whole program: the generation, one stream per engine, the variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// The generation every stream is validated and run for.
    pub arch: Arch,
    /// Raw streams indexed by [`Engine`] (`Engine::Pe as usize` …); an empty
    /// stream is an engine with nothing to run.
    pub streams: [Vec<u8>; 5],
    /// The DRAM variables, laid out in this order (EC-18).
    pub variables: Vec<Variable>,
    /// EC-29: exit points declared beside the streams (byte offsets, indexed
    /// by [`Engine`]), added to those lowering finds. A `tpb-emu lower`
    /// output declares its streams' exit points here (manifest `[exits]`),
    /// since its lowered streams no longer hold the pseudo-records that made them.
    pub exits: [Vec<usize>; 5],
}

impl Program {
    /// An empty program for `arch`.
    pub fn new(arch: Arch) -> Program {
        Program {
            arch,
            ..Program::default()
        }
    }

    /// Sets `engine`'s stream to `records`.
    pub fn set_stream(&mut self, engine: Engine, records: &[Record]) -> &mut Program {
        self.streams[engine as usize] = crate::isa::stream::to_bytes(records);
        self
    }

    /// Adds a variable.
    pub fn add(&mut self, v: Variable) -> &mut Program {
        self.variables.push(v);
        self
    }

    /// `engine`'s raw stream.
    pub fn stream(&self, engine: Engine) -> &[u8] {
        &self.streams[engine as usize]
    }

    /// EC-18: checks every variable and lays them out back to back in DRAM,
    /// each at a [`DRAM_ALIGN`]-aligned address, in declaration order.
    /// Returns each variable's base address and the DRAM size.
    pub fn layout(&self) -> Result<(Vec<u64>, u64), VariableError> {
        let mut bases = Vec::with_capacity(self.variables.len());
        let mut next = 0u64;
        // Earlier variables by name and by id (a NEFF may hold many).
        let mut names: HashMap<&str, usize> = HashMap::new();
        let mut ids: HashMap<u32, usize> = HashMap::new();
        for (index, v) in self.variables.iter().enumerate() {
            let err = |fault| VariableError {
                index,
                name: v.name.clone(),
                fault,
            };
            if !name_ok(&v.name) {
                return Err(err(VariableFault::Name));
            }
            if let Some(&first) = names.get(v.name.as_str()) {
                return Err(err(VariableFault::DuplicateName { first }));
            }
            if v.id > MAX_VARIABLE_ID {
                return Err(err(VariableFault::IdRange(v.id)));
            }
            if let Some(&first) = ids.get(&v.id) {
                return Err(err(VariableFault::DuplicateId { id: v.id, first }));
            }
            // Every earlier variable passed these checks: names and ids are unique.
            names.insert(&v.name, index);
            ids.insert(v.id, index);
            if v.dtype.size().is_none() {
                return Err(err(VariableFault::Dtype(v.dtype)));
            }
            if v.shape.is_empty() || v.shape.contains(&0) {
                return Err(err(VariableFault::Shape));
            }
            let Some(bytes) = v.bytes().filter(|&b| b <= MAX_DRAM_BYTES) else {
                return Err(err(VariableFault::TooLarge));
            };
            if let Some(init) = v.init.as_ref().filter(|i| i.len() as u64 != bytes) {
                return Err(err(VariableFault::InitLength {
                    got: init.len(),
                    want: bytes,
                }));
            }
            let end = next + bytes;
            if end > MAX_DRAM_BYTES {
                return Err(err(VariableFault::TooLarge));
            }
            bases.push(next);
            next = end.next_multiple_of(DRAM_ALIGN);
        }
        Ok((bases, next))
    }
}

/// One variable's place in DRAM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub name: String,
    pub id: u32,
    pub role: Role,
    pub base: u64,
    pub len: u64,
}

/// EC-18: the DRAM layout: each variable's byte range, and the ranges that
/// physical DRAM addresses may touch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Dram {
    pub slots: Vec<Slot>,
    /// Variable ranges with adjacent ones merged, sorted.
    covered: Vec<(u64, u64)>,
    pub size: u64,
}

impl Dram {
    /// The layout of `slots` (in DRAM order) in `size` bytes of DRAM.
    pub fn new(slots: Vec<Slot>, size: u64) -> Dram {
        let mut covered: Vec<(u64, u64)> = Vec::new();
        for s in &slots {
            match covered.last_mut() {
                Some(last) if last.1 == s.base => last.1 = s.base + s.len,
                _ => covered.push((s.base, s.base + s.len)),
            }
        }
        Dram {
            slots,
            covered,
            size,
        }
    }

    pub fn by_id(&self, id: u32) -> Option<&Slot> {
        self.slots.iter().find(|s| s.id == id)
    }

    /// True when `[lo, hi)` lies inside declared variables (one merged range).
    pub fn covered(&self, lo: i128, hi: i128) -> bool {
        if lo < 0 {
            return false;
        }
        let i = self
            .covered
            .partition_point(|&(_, end)| (end as i128) <= lo);
        self.covered
            .get(i)
            .is_some_and(|&(b, e)| b as i128 <= lo && hi <= e as i128)
    }
}
