//! mplsrouter configuration (being built).
pub mod de;
pub mod diag;
pub mod types;
pub mod yaml;
