//! Everything a run leaves for people and tools to read.

pub mod export;
