//! mplsrouter configuration (placeholder being built).
pub mod de;
pub mod yaml;
