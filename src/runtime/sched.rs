//! The machine and its scheduler (EC-31): five engines, 256 semaphores and
//! 256 events shared by them (SPEC §1), 64 registers per engine (EC-26).
//!
//! Deterministic: repeatedly pick the lowest-numbered engine (PE 0 … SP 4)
//! whose next record's wait condition holds; apply the wait's own state change
//! (the two `*_THEN_*` modes); run the record to completion; apply its update
//! (for DMA_MEMCPY first `sem[byte 13] += byte 14`, EC-23). An engine's
//! program ends at the end of its stream, at a branch to it (EC-28, EC-32),
//! or when execution reaches one of its exit points by falling through or by
//! a REGISTER-mode branch (a function's return; EC-29, amended).
//!
//! Two budgets stop a program that would not end in reasonable time: the
//! record budget (`--max-records`) and the work budget (`--max-work`:
//! elements moved by DMA plus elements folded by Pool records),
//! checked before each record runs.
//! When no engine can run and some have not finished: [`RunError::Deadlock`].

use super::DEFAULT_MAX_RECORDS;
use super::dma::{self, DmaPlan};
use super::held::HeldDram;
use super::image::DramImage;
use super::staged::{Cond, Op, Staged, Step, To, Update, Wait};
use super::timeline::Timeline;
use crate::device::{
    BackendError, Begin, Capture, ChipDma, ContractFault, DeviceMemory, DispatchError, DramWindow,
    End, Executor, HostRange, HostWrite, Trace, Validated, When, Write, dispatch,
};
use crate::isa::control::DmaMemcpy;
use crate::isa::enums::Engine;
use crate::isa::tensor::Region;
use crate::isa::text::disasm_record;
use crate::limits::DEFAULT_MAX_WORK;
use crate::limits::{NUM_EVENTS, NUM_REGISTERS, NUM_SEMAPHORES, RECORD_BYTES};
use std::borrow::Cow;
use std::fmt;
use std::ops::{ControlFlow, Range};
use std::sync::Arc;

/// An engine that cannot go on: where it stands and what it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The engine.
    pub engine: Engine,
    /// Byte offset of its next record.
    pub offset: usize,
    /// The record's opcode name.
    pub opcode: String,
    /// The condition it waits for.
    pub wait: Wait,
    /// The current value of what it waits on (`sem[3] = 1`, `event[4] is clear`).
    pub now: String,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} engine at byte offset {} ({}) waits for {} ({})",
            self.engine, self.offset, self.opcode, self.wait, self.now
        )
    }
}

/// EC-31: no engine can run and some have not finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// Records executed before the deadlock.
    pub executed: u64,
    /// Every unfinished engine, in engine order.
    pub blocked: Vec<Blocked>,
}

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "deadlock after {} records: no engine can run (EC-31)",
            self.executed
        )?;
        for b in &self.blocked {
            write!(f, "\n  {b}")?;
        }
        Ok(())
    }
}

/// Why a run stopped before every engine finished.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No engine can run (EC-31).
    #[error("{0}")]
    Deadlock(Deadlock),
    /// A taken branch whose target is not a record boundary of the stream nor its end (EC-28).
    #[error(
        "{engine} stream, COMPARE_BRANCH at byte offset {offset}: target {target} is not a \
         record boundary in 0..={len} (EC-28)"
    )]
    BadBranchTarget {
        /// The engine.
        engine: Engine,
        /// The branch record's byte offset.
        offset: usize,
        /// The target byte offset.
        target: i128,
        /// The stream's length in bytes.
        len: usize,
    },
    /// The next record would take the work done past the work budget.
    #[error(
        "stopped before the {engine} record at byte offset {offset}: it would take the work \
         done past the work budget of {limit} elements ({done} done, {cost} more; raise \
         --max-work)"
    )]
    WorkBudget {
        /// The budget, in elements moved or folded.
        limit: u64,
        /// The work done so far.
        done: u64,
        /// The record's work.
        cost: u64,
        /// The engine.
        engine: Engine,
        /// The record's byte offset.
        offset: usize,
    },
    /// More records executed than the budget allows (a program that never ends).
    #[error(
        "stopped after {limit} records: the record budget is spent (the program may loop \
         forever; raise --max-records)"
    )]
    RecordBudget {
        /// The budget.
        limit: u64,
    },
    /// The POOL engine's dispatch or the backend failed on a record.
    #[error("{engine} stream, record at byte offset {offset}: {source}")]
    Dispatch {
        /// The engine.
        engine: Engine,
        /// The record's byte offset.
        offset: usize,
        /// What failed.
        source: DispatchError,
    },
    /// The backend failed completing deferred work.
    #[error(transparent)]
    Backend(#[from] crate::device::BackendError),
    /// The progress callback stopped the run ([`Machine::run_controlled`]).
    #[error("interrupted after {executed} records")]
    Interrupted {
        /// Records executed before it stopped.
        executed: u64,
    },
}

/// How often (in executed records) the progress callback runs.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// A staged program in a device: memory, DRAM, semaphores, events, registers
/// and each engine's position. Everything is zero at start but the inputs.
pub struct Machine {
    staged: Arc<Staged>,
    mem: DeviceMemory,
    dram: DramImage,
    sems: [i32; NUM_SEMAPHORES],
    events: [bool; NUM_EVENTS],
    regs: [[u32; NUM_REGISTERS]; 5],
    /// Index of each engine's next record.
    pc: [usize; 5],
    executed: [u64; 5],
    max_records: u64,
    /// Elements moved or folded so far, and the budget.
    work: u64,
    max_work: u64,
    /// Per engine: the record index whose blocked state was already traced.
    traced_block: [Option<usize>; 5],
    /// The timeline recorder, told of every executed record when attached.
    timeline: Option<Box<Timeline>>,
    /// DMAs from SBUF/PSUM to DRAM whose source the backend captured and
    /// whose DRAM writes wait for [`Machine::land_deferred`], in order.
    deferred: Vec<Deferred>,
    /// Callers read only DRAM after a run: the backend drops what it holds
    /// newer instead of reading it back ([`Machine::set_dram_only`]).
    dram_only: bool,
    /// The variables a backend that keeps memory may hold, worked out at
    /// the first run with one (by its name).
    held_plan: Option<(&'static str, Arc<HeldDram>)>,
    /// The variables the backend holds during this run.
    held: Option<Arc<HeldDram>>,
    /// False: a resident backend holds no DRAM variable, so that DRAM is
    /// the host's between records ([`Machine::set_hold_dram`]).
    hold_dram: bool,
}

/// What a [`Watch`] is told after each executed record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Executed {
    /// Records executed before this one, all engines together (the
    /// scheduler's order: 0 for the first record of the run).
    pub seq: u64,
    /// The engine.
    pub engine: Engine,
    /// Index of the record in the engine's (lowered) stream.
    pub index: usize,
}

/// Called after each record a run executes ([`Machine::run_watched`]),
/// with the machine (call [`Machine::sync`] before reading its memory on a
/// backend that keeps its own) and the executor. `Break` stops the run with
/// [`RunError::Interrupted`].
pub type Watch<'a> =
    dyn FnMut(&mut Machine, &mut dyn Executor, Executed) -> Result<ControlFlow<()>, RunError> + 'a;

/// A DMA whose host half waits on a capture of its source.
struct Deferred {
    /// Engine and record index of the DMA.
    engine: usize,
    index: usize,
    /// Its source ranges (the capture holds their bytes, in order).
    ranges: Vec<HostRange>,
    capture: Capture,
    /// The DRAM bytes it writes, `[lo, hi)`.
    hull: (i64, i64),
}

/// How a backend that keeps its own memory may take a DMA touching SBUF or
/// PSUM whole, so that it does not pass through the host's copy.
enum Offer<'a> {
    /// Between SBUF/PSUM and a DRAM variable the backend holds: it must
    /// take it ([`Resident::dma`]).
    Held(ChipDma),
    /// Between on-chip places: the backend may run it behind the queued ops
    /// ([`Resident::dma`]).
    Chip(ChipDma),
    /// From DRAM, converting nothing: its rows, for the backend to write
    /// ([`Write::Offer`]).
    Rows(Vec<HostWrite<'a>>),
    /// From SBUF/PSUM to DRAM: the backend may capture its source for the
    /// host to land later ([`When::Later`]).
    Later,
    /// None of these: the host runs it.
    None,
}

impl<'a> Offer<'a> {
    /// What the backend is offered of `plan`, which touches SBUF or PSUM
    /// and no held variable.
    fn of(plan: &DmaPlan, dram: &'a mut DramImage) -> Offer<'a> {
        if let Some(writes) = dma::rows_into_chip(plan, dram) {
            return Offer::Rows(writes);
        }
        if let Some(d) = dma::chip_dma(plan, None) {
            return Offer::Chip(d);
        }
        if plan.on_chip_to_dram() {
            return Offer::Later;
        }
        Offer::None
    }
}

impl fmt::Debug for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Machine")
            .field("arch", &self.staged.arch)
            .field("pc", &self.pc)
            .field("executed", &self.executed)
            .finish_non_exhaustive()
    }
}

impl Machine {
    /// A machine at the start of `staged`: zero memory, DRAM holding the
    /// inputs. Share one staged program between machines with an `Arc`.
    pub fn new(staged: impl Into<Arc<Staged>>) -> Machine {
        let staged = staged.into();
        // A staged program whose image moved into another machine
        // (`Machine::from_owned`) starts from zero DRAM rather than out of bounds.
        let dram = if staged.dram_init.len() == staged.dram.size {
            staged.dram_init.clone()
        } else {
            DramImage::zeroed(staged.dram.size)
        };
        Machine::with_dram(staged, dram)
    }

    /// [`Machine::new`] taking the staged program by value: its DRAM image
    /// becomes the machine's DRAM (no copy). The machine's
    /// [`Machine::staged`] then holds no image; to run one staged program
    /// several times, share it with [`Machine::new`] and an `Arc`.
    pub fn from_owned(mut staged: Staged) -> Machine {
        let dram = std::mem::take(&mut staged.dram_init);
        Machine::with_dram(Arc::new(staged), dram)
    }

    fn with_dram(staged: Arc<Staged>, dram: DramImage) -> Machine {
        let pc = start_pcs(&staged);
        Machine {
            mem: DeviceMemory::new(staged.arch),
            dram,
            staged,
            sems: [0; NUM_SEMAPHORES],
            events: [false; NUM_EVENTS],
            regs: [[0; NUM_REGISTERS]; 5],
            pc,
            executed: [0; 5],
            max_records: DEFAULT_MAX_RECORDS,
            work: 0,
            max_work: DEFAULT_MAX_WORK,
            traced_block: [None; 5],
            timeline: None,
            deferred: Vec::new(),
            dram_only: false,
            held_plan: None,
            held: None,
            hold_dram: true,
        }
    }

    /// With `false`, a backend that keeps its own memory holds no DRAM
    /// variable for the run: every DRAM byte stays the host's, so a
    /// [`Watch`] reads DRAM between records with no read-back. On by default.
    pub fn set_hold_dram(&mut self, on: bool) {
        self.hold_dram = on;
    }

    /// Brings the host's copy of SBUF, PSUM and DRAM up to date mid-run:
    /// lands every deferred DMA and reads back from a backend that keeps
    /// its own memory the on-chip bytes its ops made newer. DRAM variables
    /// the backend holds stay there (see [`Machine::set_hold_dram`]).
    pub fn sync(&mut self, exec: &mut dyn Executor) -> Result<(), RunError> {
        self.land_deferred(exec)?;
        if let Some(res) = exec.resident() {
            let ranges: Vec<HostRange> = [Region::Sbuf, Region::Psum]
                .into_iter()
                .flat_map(|region| {
                    let per = self.mem.active_bytes(region) as usize;
                    (0..crate::limits::PARTITIONS as usize).map(move |p| HostRange {
                        region,
                        bytes: p * per..(p + 1) * per,
                    })
                })
                .collect();
            res.read(&mut self.mem, &ranges, When::Now)?;
        }
        Ok(())
    }

    /// Returns the machine to the start of its staged program, reusing its
    /// memory and DRAM buffers (no allocation, no fresh pages): SBUF and PSUM
    /// zero, DRAM reloaded from the staged image (all zero when the image
    /// moved into this machine, [`Machine::from_owned`]), semaphores, events,
    /// registers, positions and counters as at start. The budgets stay.
    pub fn restart(&mut self) {
        self.mem.fill(0);
        self.dram.reset_from(&self.staged.dram_init);
        self.sems = [0; NUM_SEMAPHORES];
        self.events = [false; NUM_EVENTS];
        self.regs = [[0; NUM_REGISTERS]; 5];
        self.pc = start_pcs(&self.staged);
        self.executed = [0; 5];
        self.work = 0;
        self.traced_block = [None; 5];
        self.deferred.clear();
    }

    /// With `on`, a run that completes ends without bringing the host's
    /// copy of SBUF and PSUM up to date from a backend that holds newer
    /// bytes ([`End::Drop`] instead of [`End::ReadBack`]), and
    /// without reading back the scratch variables the backend held for the
    /// run, so that nothing crosses back that nobody reads: for callers that
    /// read only the output variables afterwards. [`Machine::memory`] may
    /// then be stale, and so may scratch variables in [`Machine::dram`] and
    /// [`Machine::variable`] (until [`Machine::restart`]). A run that stops
    /// with an error still finishes and reads everything back. Off by
    /// default.
    pub fn set_dram_only(&mut self, on: bool) {
        self.dram_only = on;
    }

    /// Sets the record budget (default [`DEFAULT_MAX_RECORDS`]).
    pub fn set_max_records(&mut self, n: u64) {
        self.max_records = n;
    }

    /// Sets the work budget (default [`DEFAULT_MAX_WORK`]): elements moved
    /// by DMA or folded by Pool records over the whole run (control records count 1).
    pub fn set_max_work(&mut self, n: u64) {
        self.max_work = n;
    }

    /// Attaches a timeline recorder ([`Timeline`]; `keep_slices` false:
    /// per-engine totals only). It observes; the order of execution is the same.
    pub fn record_timeline(&mut self, keep_slices: bool) {
        self.timeline = Some(Box::new(Timeline::new(keep_slices)));
    }

    /// The timeline recorded so far, when [`Machine::record_timeline`] attached one.
    pub fn timeline(&self) -> Option<&Timeline> {
        self.timeline.as_deref()
    }

    /// Elements moved or folded so far.
    pub fn work_done(&self) -> u64 {
        self.work
    }

    /// The staged program.
    pub fn staged(&self) -> &Staged {
        &self.staged
    }

    /// SBUF and PSUM (after a run with [`Machine::set_dram_only`], the
    /// host's copy, which may be stale).
    pub fn memory(&self) -> &DeviceMemory {
        &self.mem
    }

    /// The whole DRAM image (borrowed, unless an input shared with a mapped
    /// file keeps DRAM in parts: then a copy). After a run with
    /// [`Machine::set_dram_only`], scratch variables may be stale.
    pub fn dram(&self) -> Cow<'_, [u8]> {
        self.dram.to_bytes()
    }

    /// DRAM bytes `[lo, hi)` without a copy (`None` when they are not in
    /// one part of the image, [`Machine::dram`], or out of range).
    pub fn dram_range(&self, lo: u64, hi: u64) -> Option<&[u8]> {
        self.dram.get(lo, hi)
    }

    /// The bytes of the variable called `name`, taken out of the machine's
    /// DRAM without a copy when they can be (for a caller that only reads
    /// results once the run is over). `None` when no variable has that name.
    pub fn into_variable(self, name: &str) -> Option<Vec<u8>> {
        let s = self.staged.dram.slots.iter().find(|s| s.name == name)?;
        Some(self.dram.take(s.base, s.base + s.len))
    }

    /// The bytes of the variable called `name`.
    pub fn variable(&self, name: &str) -> Option<&[u8]> {
        let s = self.staged.dram.slots.iter().find(|s| s.name == name)?;
        self.dram.get(s.base, s.base + s.len)
    }

    /// Semaphore `idx`.
    pub fn semaphore(&self, idx: u8) -> i32 {
        self.sems[idx as usize]
    }

    /// Event `idx`.
    pub fn event(&self, idx: u8) -> bool {
        self.events[idx as usize]
    }

    /// Register `reg` of `engine` (`reg` < 64).
    pub fn register(&self, engine: Engine, reg: u8) -> u32 {
        self.regs[engine as usize][reg as usize]
    }

    /// Records each engine has executed (indexed by [`Engine`]).
    pub fn executed(&self) -> [u64; 5] {
        self.executed
    }

    /// Records executed by all engines.
    pub fn total_executed(&self) -> u64 {
        self.executed.iter().sum()
    }

    /// True when every engine has reached the end of its program.
    pub fn finished(&self) -> bool {
        Engine::ALL
            .iter()
            .all(|&e| self.pc[e as usize] >= self.staged.steps[e as usize].len())
    }

    /// Runs until every engine has finished; Pool records go to `exec`.
    pub fn run(&mut self, exec: &mut dyn Executor, trace: &mut dyn Trace) -> Result<(), RunError> {
        self.run_with_progress(exec, trace, &mut |_| {})
    }

    /// [`Machine::run`], calling `progress` with the records executed so far
    /// every [`PROGRESS_EVERY`] records.
    pub fn run_with_progress(
        &mut self,
        exec: &mut dyn Executor,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(), RunError> {
        self.run_controlled(exec, trace, &mut |n| {
            progress(n);
            ControlFlow::Continue(())
        })
    }

    /// [`Machine::run_with_progress`] where `progress` may stop the run
    /// (a Ctrl-C in the Python bindings): [`ControlFlow::Break`] ends it
    /// with [`RunError::Interrupted`], after the backend has finished and
    /// handed memory back as after any other error.
    pub fn run_controlled(
        &mut self,
        exec: &mut dyn Executor,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(u64) -> ControlFlow<()>,
    ) -> Result<(), RunError> {
        self.run_watched(exec, trace, progress, None)
    }

    /// [`Machine::run_controlled`], calling `watch` after every record.
    /// Without a watch the run is the same code with one branch per record.
    pub fn run_watched(
        &mut self,
        exec: &mut dyn Executor,
        trace: &mut dyn Trace,
        progress: &mut dyn FnMut(u64) -> ControlFlow<()>,
        mut watch: Option<&mut Watch<'_>>,
    ) -> Result<(), RunError> {
        let mut total = self.total_executed();
        // Nothing ran since `new`/`restart`: SBUF and PSUM are all zero.
        self.begin(exec, total == 0)?;
        let result = loop {
            match self.pick(trace) {
                Some(e) => {
                    if total >= self.max_records {
                        break Err(RunError::RecordBudget {
                            limit: self.max_records,
                        });
                    }
                    let step = &self.staged.steps[e][self.pc[e]];
                    let cost = record_work(step);
                    match self.work.checked_add(cost) {
                        Some(w) if w <= self.max_work => self.work = w,
                        _ => {
                            break Err(RunError::WorkBudget {
                                limit: self.max_work,
                                done: self.work,
                                cost,
                                engine: Engine::ALL[e],
                                offset: step.offset,
                            });
                        }
                    }
                    let index = self.pc[e];
                    if let Err(err) = self.step(e, exec, trace) {
                        break Err(err);
                    }
                    if let Some(w) = watch.as_deref_mut() {
                        let at = Executed {
                            seq: total,
                            engine: Engine::ALL[e],
                            index,
                        };
                        match w(self, exec, at) {
                            Ok(ControlFlow::Continue(())) => {}
                            Ok(ControlFlow::Break(())) => {
                                break Err(RunError::Interrupted {
                                    executed: total + 1,
                                });
                            }
                            Err(err) => break Err(err),
                        }
                    }
                    total += 1;
                    if total.is_multiple_of(PROGRESS_EVERY) && progress(total).is_break() {
                        break Err(RunError::Interrupted { executed: total });
                    }
                }
                None if self.finished() => break Ok(()),
                None => break Err(RunError::Deadlock(self.deadlock())),
            }
        };
        // Deferred DMAs land in DRAM, held DRAM comes back, and deferred
        // backend work lands in host memory, whatever happened.
        let landed = self.land_deferred(exec);
        // A run that stopped early may be inspected or resumed: it gets
        // its memory back whatever `dram_only` says.
        let whole = !(self.dram_only && result.is_ok() && landed.is_ok());
        let done = match exec.resident() {
            Some(res) => {
                let held = self.held.take();
                // Dropped, the held variables (all scratch) keep in DRAM
                // the bytes they had at the start of the run.
                let back = match &held {
                    Some(h) if whole => &h.vars[..],
                    _ => &[],
                };
                let ranges: Vec<Range<u64>> =
                    back.iter().map(|v| v.at..v.at + (v.hi - v.lo)).collect();
                let end = if whole { End::ReadBack } else { End::Drop };
                let dram = &mut self.dram;
                res.end(&mut self.mem, end, &ranges, &mut |k, bytes| {
                    let v = &back[k];
                    let (window, base) = dram.window_mut(v.lo, v.hi);
                    window[(v.lo - base) as usize..(v.hi - base) as usize].copy_from_slice(bytes);
                })
            }
            None => exec.finish(&mut self.mem),
        };
        result?;
        landed?;
        done?;
        Ok(())
    }

    /// Begins a run on a backend that keeps its own memory
    /// ([`Executor::resident`]): tells it whether SBUF and PSUM are zero and
    /// offers it the DRAM variables it can hold for this run ([`HeldDram`]),
    /// with their bytes.
    fn begin(&mut self, exec: &mut dyn Executor, zeroed: bool) -> Result<(), RunError> {
        self.held = None;
        let name = exec.name();
        let Some(res) = exec.resident() else {
            return Ok(());
        };
        if !self.hold_dram {
            res.begin(&self.mem, Begin { zeroed, dram: None })?;
            return Ok(());
        }
        let plan = match &self.held_plan {
            Some((n, plan)) if *n == name => Arc::clone(plan),
            _ => {
                let plan = Arc::new(HeldDram::plan(&self.staged, &|d| res.takes(d)));
                self.held_plan = Some((name, Arc::clone(&plan)));
                plan
            }
        };
        let init = plan.init(&self.dram);
        let dram = (!plan.vars.is_empty()).then_some(DramWindow {
            len: plan.len,
            init: &init,
        });
        if res.begin(&self.mem, Begin { zeroed, dram })? && dram.is_some() {
            self.held = Some(plan);
        }
        Ok(())
    }

    /// Runs DMA record `idx` of engine `e` (its semaphore aside). One
    /// route: a backend that keeps its own memory ([`Executor::resident`])
    /// is offered the DMA ([`Offer`]) and may take it whole; otherwise the
    /// host runs it on its copy, having read now what the DMA touches of
    /// SBUF/PSUM and reporting what it wrote.
    fn dma(
        &mut self,
        plan: &DmaPlan,
        e: usize,
        idx: usize,
        exec: &mut dyn Executor,
    ) -> Result<(), RunError> {
        let held = self.held.as_ref().and_then(|h| h.dma(plan));
        // DRAM bytes a deferred DMA still owes are landed before any DMA
        // reads or writes them (a held variable's DMAs are never deferred).
        if held.is_none()
            && plan
                .dram_hulls()
                .any(|(lo, hi)| self.deferred.iter().any(|d| lo < d.hull.1 && d.hull.0 < hi))
        {
            self.land_deferred(exec)?;
        }
        let name = exec.name();
        // Without a copy of its own, the backend has nothing to be told:
        // `mem` is the truth.
        let res = match exec.resident() {
            Some(res) if plan.touches_on_chip() => res,
            _ => {
                dma::execute(plan, &mut self.mem, &mut self.dram);
                return Ok(());
            }
        };
        let (ranges, written) = plan.host_ranges();
        let (read, wrote) = ranges.split_at(written);
        let offer = match held {
            Some(d) => Offer::Held(d),
            None => Offer::of(plan, &mut self.dram),
        };
        let taken = match &offer {
            Offer::Held(d) | Offer::Chip(d) => res.dma(d, &self.mem, read, wrote)?,
            Offer::Rows(writes) => res.write(&self.mem, wrote, Write::Offer(writes))?,
            Offer::Later => match res.read(&mut self.mem, &ranges, When::Later)? {
                Some(capture) => {
                    let hull = plan.dram_hulls().next().expect("a DMA to DRAM");
                    self.deferred.push(Deferred {
                        engine: e,
                        index: idx,
                        ranges,
                        capture,
                        hull,
                    });
                    return Ok(());
                }
                None => false,
            },
            Offer::None => false,
        };
        let must = matches!(offer, Offer::Held(_));
        drop(offer);
        match (taken, must) {
            (true, _) => Ok(()),
            // The backend said it would run every DMA of the variable when
            // it was chosen ([`HeldDram::plan`]).
            (false, true) => Err(RunError::Backend(BackendError::contract(
                name,
                ContractFault::RefusedHeldDma(Box::new(plan.resolved())),
            ))),
            (false, false) => {
                // Deferred datapath work must land in the bytes the host
                // reads or writes, and what it writes must reach the backend.
                res.read(&mut self.mem, &ranges, When::Now)?;
                dma::execute(plan, &mut self.mem, &mut self.dram);
                if written < ranges.len() {
                    res.write(&self.mem, &ranges[written..], Write::Done)?;
                }
                Ok(())
            }
        }
    }

    /// Lands every deferred DMA in DRAM, in order, from its captured source
    /// bytes: one wait on the backend for all of them. The host's copy of
    /// SBUF/PSUM is the backend's business, so it is not touched.
    fn land_deferred(&mut self, exec: &mut dyn Executor) -> Result<(), RunError> {
        if self.deferred.is_empty() {
            return Ok(());
        }
        let deferred = std::mem::take(&mut self.deferred);
        let captures: Vec<Capture> = deferred.iter().map(|d| d.capture).collect();
        let staged = Arc::clone(&self.staged);
        let dram = &mut self.dram;
        let Some(res) = exec.resident() else {
            unreachable!("only a resident backend captures");
        };
        res.collect(&mut self.mem, &captures, &mut |k, bytes| {
            let d = &deferred[k];
            let Op::Dma(plan) = &staged.steps[d.engine][d.index].op else {
                unreachable!("only DMAs are deferred");
            };
            dma::execute_captured(plan, &d.ranges, bytes, dram);
        })?;
        Ok(())
    }

    /// EC-31: the lowest-numbered engine whose next record's wait holds.
    fn pick(&mut self, trace: &mut dyn Trace) -> Option<usize> {
        for e in 0..5 {
            let Some(step) = self.staged.steps[e].get(self.pc[e]) else {
                continue;
            };
            if self.wait_holds(step.wait) {
                return Some(e);
            }
            if trace.enabled() && self.traced_block[e] != Some(self.pc[e]) {
                self.traced_block[e] = Some(self.pc[e]);
                let line = format!(
                    "{:<4} {}: blocked: waits for {} ({})",
                    Engine::ALL[e].name(),
                    step.offset,
                    step.wait,
                    self.now(step.wait)
                );
                trace.line(&line);
            }
        }
        None
    }

    fn wait_holds(&self, w: Wait) -> bool {
        match w {
            Wait::None => true,
            Wait::Sem { idx, cmp, value } => cmp.holds(self.sems[idx as usize], value),
            Wait::Event { idx, set, .. } => self.events[idx as usize] == set,
        }
    }

    /// The current value of what `w` reads.
    fn now(&self, w: Wait) -> String {
        match w {
            Wait::None => "no wait".into(),
            Wait::Sem { idx, .. } => format!("sem[{idx}] = {}", self.sems[idx as usize]),
            Wait::Event { idx, .. } => format!(
                "event[{idx}] is {}",
                if self.events[idx as usize] {
                    "set"
                } else {
                    "clear"
                }
            ),
        }
    }

    fn deadlock(&self) -> Deadlock {
        let blocked = Engine::ALL
            .iter()
            .filter_map(|&e| {
                let step = self.staged.steps[e as usize].get(self.pc[e as usize])?;
                Some(Blocked {
                    engine: e,
                    offset: step.offset,
                    opcode: step.record.opcode().to_string(),
                    wait: step.wait,
                    now: self.now(step.wait),
                })
            })
            .collect();
        Deadlock {
            executed: self.total_executed(),
            blocked,
        }
    }

    /// Runs engine `e`'s next record (its wait holds).
    fn step(
        &mut self,
        e: usize,
        exec: &mut dyn Executor,
        trace: &mut dyn Trace,
    ) -> Result<(), RunError> {
        let engine = Engine::ALL[e];
        let idx = self.pc[e];
        let staged = Arc::clone(&self.staged);
        let step: &Step = &staged.steps[e][idx];
        let len = self.staged.steps[e].len() * RECORD_BYTES;
        if trace.enabled() {
            let mut line = format!(
                "{:<4} {}: {}",
                engine.name(),
                step.offset,
                disasm_record(&step.record)
            );
            if let Some(d) = describe(&step.op) {
                line += &format!(" ; {d}");
            }
            if step.wait != Wait::None {
                line += &format!(" ; wait {} satisfied ({})", step.wait, self.now(step.wait));
            }
            trace.line(&line);
        }
        // The two *_THEN_* waits change the event once satisfied.
        if let Wait::Event {
            idx: i,
            set,
            flip: true,
        } = step.wait
        {
            self.events[i as usize] = !set;
        }
        let mut next = idx + 1;
        let mut arrival = Arrival::FallThrough;
        match &step.op {
            Op::Events => {}
            Op::Pool(v) => {
                let mut t = EngineTrace {
                    inner: trace,
                    engine,
                    skip: true,
                };
                dispatch::dispatch(v, &mut self.mem, &mut t, exec).map_err(|source| {
                    RunError::Dispatch {
                        engine,
                        offset: step.offset,
                        source,
                    }
                })?;
            }
            Op::Mov32 { reg, value } => self.regs[e][*reg as usize] = *value,
            Op::CtrlAl { dst, src, imm } => {
                let r = &mut self.regs[e];
                r[*dst as usize] = r[*src as usize].wrapping_add(*imm as u32);
            }
            Op::Branch { cond, to } => {
                let r = &self.regs[e];
                let taken = match *cond {
                    Cond::Always => true,
                    Cond::Eq { reg, imm } => r[reg as usize] == imm,
                    Cond::Gt { reg, imm } => (r[reg as usize] as i32) > imm,
                };
                if taken {
                    let target = match *to {
                        To::Offset(t) => t as i128,
                        To::Registers { lo, hi } => {
                            (r[lo as usize] as u64 | (r[hi as usize] as u64) << 32) as i128
                        }
                    };
                    if target < 0 || target > len as i128 || target % RECORD_BYTES as i128 != 0 {
                        return Err(RunError::BadBranchTarget {
                            engine,
                            offset: step.offset,
                            target,
                            len,
                        });
                    }
                    next = target as usize / RECORD_BYTES;
                    arrival = match *to {
                        To::Offset(_) => Arrival::RelImm,
                        To::Registers { .. } => Arrival::Register,
                    };
                }
                if trace.enabled() {
                    let line = if !taken {
                        format!("{:<4} {}: branch not taken", engine.name(), step.offset)
                    } else if next * RECORD_BYTES == len {
                        format!(
                            "{:<4} {}: branch taken to the end of the stream",
                            engine.name(),
                            step.offset
                        )
                    } else {
                        format!(
                            "{:<4} {}: branch taken to {}",
                            engine.name(),
                            step.offset,
                            next * RECORD_BYTES
                        )
                    };
                    trace.line(&line);
                }
            }
            Op::Dma(plan) => {
                self.dma(plan, e, idx, exec)?;
                let s = &mut self.sems[plan.sem as usize];
                *s = s.wrapping_add(plan.inc as i32);
            }
        }
        match step.update {
            Update::None => {}
            Update::Event { idx: i, set } => self.events[i as usize] = set,
            Update::SemAdd { idx: i, delta } => {
                let s = &mut self.sems[i as usize];
                *s = s.wrapping_add(delta);
            }
            Update::SemWrite { idx: i, value } => self.sems[i as usize] = value,
        }
        if let Some(tl) = &mut self.timeline {
            tl.record(engine, idx, step);
        }
        if self.staged.steps[e].get(next).is_some_and(|s| s.exit) && exit_point_ends(arrival) {
            next = self.staged.steps[e].len();
        }
        self.pc[e] = next;
        self.executed[e] += 1;
        self.traced_block[e] = None;
        if trace.enabled() && next >= self.staged.steps[e].len() {
            let line = format!(
                "{:<4} end of program after {} records",
                engine.name(),
                self.executed[e]
            );
            trace.line(&line);
        }
        Ok(())
    }
}

/// How execution arrived at an engine's next record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arrival {
    /// The previous record completed without a taken branch.
    FallThrough,
    /// A taken COMPARE_BRANCH with a REL_IMM target (a call, a jump).
    RelImm,
    /// A taken COMPARE_BRANCH through registers (a function's return).
    Register,
}

/// EC-29 (amended): arriving at an exit point by falling through or by a
/// REGISTER-mode branch (a function's return) ends the engine's program; a
/// REL_IMM branch onto it enters the function that starts there.
/// Each engine's first record index. EC-29: an engine whose stream starts
/// at an exit point (no main program) has ended.
fn start_pcs(staged: &Staged) -> [usize; 5] {
    std::array::from_fn(|e| match staged.steps[e].first() {
        Some(s) if s.exit => staged.steps[e].len(),
        _ => 0,
    })
}

fn exit_point_ends(arrival: Arrival) -> bool {
    // EC-29
    matches!(arrival, Arrival::FallThrough | Arrival::Register)
}

/// The work of one record for the work budget: elements moved by a
/// DMA_MEMCPY (its element count, [`DmaMemcpy`]), elements a datapath
/// record reads or writes ([`datapath_work`]); 1 for every other record
/// (control and events), so that a loop of them still counts.
pub(crate) fn record_work(step: &Step) -> u64 {
    match &step.op {
        Op::Pool(v) => datapath_work(v),
        Op::Dma(_) => DmaMemcpy::decode(&step.record).src.elements().max(1),
        _ => 1,
    }
}

/// The work budget's count for a datapath record: the elements its device
/// op reads or writes ([`crate::device::Op::elements`]; Pool: the elements
/// it folds), at least 1.
pub fn datapath_work(v: &Validated) -> u64 {
    crate::device::Op::from_validated(v).map_or(1, |op| op.elements().max(1))
}

/// A readable form of the control and DMA records (the text form prints them raw).
fn describe(op: &Op) -> Option<String> {
    Some(match op {
        Op::Events | Op::Pool(_) => return None,
        Op::Mov32 { reg, value } => format!("r{reg} = {value:#x}"),
        Op::CtrlAl { dst, src, imm } => format!("r{dst} = r{src} + {imm}"),
        Op::Branch { cond, to } => {
            let c = match cond {
                Cond::Always => "always".to_string(),
                Cond::Eq { reg, imm } => format!("if r{reg} == {imm:#x}"),
                Cond::Gt { reg, imm } => format!("if r{reg} > {imm} (signed)"),
            };
            match to {
                To::Offset(t) => format!("branch {c} to {t}"),
                To::Registers { lo, hi } => format!("branch {c} to r{lo} | r{hi} << 32"),
            }
        }
        Op::Dma(p) => p.to_string(),
    })
}

/// The POOL engine's dispatch trace, each line prefixed with the engine; its
/// first line (the record line) is dropped, the scheduler prints its own.
struct EngineTrace<'a> {
    inner: &'a mut dyn Trace,
    engine: Engine,
    skip: bool,
}

impl Trace for EngineTrace<'_> {
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }
    fn line(&mut self, line: &str) {
        if std::mem::take(&mut self.skip) {
            return;
        }
        let line = format!("{:<4} {line}", self.engine.name());
        self.inner.line(&line);
    }
}
