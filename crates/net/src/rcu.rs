//! Epoch-based (QSBR) publication of snapshots (placeholder until the tables issue lands).
