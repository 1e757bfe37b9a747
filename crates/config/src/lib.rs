//! mplsrouter configuration (being built).
pub mod de;
pub mod diag;
pub mod startup;
pub mod types;
pub mod yaml;
