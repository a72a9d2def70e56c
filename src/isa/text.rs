//! Text form (being written).
use super::record::Record;
use super::stream::StreamError;
/// placeholder
pub fn disasm_stream(_b: &[u8]) -> Result<String, StreamError> { Ok(String::new()) }
/// placeholder
pub fn asm(_t: &str) -> Result<Vec<Record>, String> { Ok(vec![]) }
