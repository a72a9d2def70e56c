//! The `tpb-emu` command line.
fn main() {}
