//! The emulated device: memory (SBUF/PSUM), the POOL engine dispatch, the CPU
//! reference executor and (later) the wgpu executor.
