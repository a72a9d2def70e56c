//! The host runtime: programs, pseudo-instruction lowering, the validation
//! pass, staging and scheduling (later issues; see ARCHITECTURE.md).
