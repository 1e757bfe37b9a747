//! Configuration (placeholder until the configuration issue lands).
