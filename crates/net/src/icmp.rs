//! ICMP generation (placeholder until the forwarding-core issue lands).
