//! Weighted ECMP groups: members expanded into a bucket array indexed by the flow hash.

use super::AdjId;

/// Buckets per group; weights are scaled to fill this many (at least one per member).
pub const ECMP_BUCKETS: usize = 256;

/// Why a group could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EcmpError {
    #[error("an ECMP group needs at least one member")]
    Empty,
    #[error("ECMP member weights must be at least 1")]
    ZeroWeight,
    #[error("an ECMP group has at most {ECMP_BUCKETS} members, got {0}")]
    TooManyMembers(usize),
}

/// A weighted set of adjacencies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EcmpGroup {
    members: Vec<(AdjId, u32)>,
    /// Fixed size, so that `select` needs no bounds check.
    buckets: Box<[AdjId; ECMP_BUCKETS]>,
}

impl EcmpGroup {
    /// A group from `(adjacency, weight)` pairs.
    pub fn new(members: &[(AdjId, u32)]) -> Result<EcmpGroup, EcmpError> {
        if members.is_empty() {
            return Err(EcmpError::Empty);
        }
        if members.len() > ECMP_BUCKETS {
            return Err(EcmpError::TooManyMembers(members.len()));
        }
        if members.iter().any(|&(_, w)| w == 0) {
            return Err(EcmpError::ZeroWeight);
        }
        let total: u64 = members.iter().map(|&(_, w)| w as u64).sum();
        // Largest-remainder apportionment of the buckets, at least one per member.
        let mut counts: Vec<usize> = members
            .iter()
            .map(|&(_, w)| ((w as u64 * ECMP_BUCKETS as u64) / total).max(1) as usize)
            .collect();
        let mut assigned: usize = counts.iter().sum();
        let n = counts.len();
        let mut i = 0;
        while assigned < ECMP_BUCKETS {
            counts[i % n] += 1;
            assigned += 1;
            i += 1;
        }
        while assigned > ECMP_BUCKETS {
            let (idx, _) = counts
                .iter()
                .enumerate()
                .max_by_key(|&(_, c)| *c)
                .expect("non-empty");
            counts[idx] -= 1;
            assigned -= 1;
        }
        // Interleave members so neighbouring hash values spread across them.
        let mut buckets = Vec::with_capacity(ECMP_BUCKETS);
        let mut left = counts.clone();
        while buckets.len() < ECMP_BUCKETS {
            for (m, l) in left.iter_mut().enumerate() {
                if *l > 0 {
                    buckets.push(members[m].0);
                    *l -= 1;
                }
            }
        }
        Ok(EcmpGroup {
            members: members.to_vec(),
            buckets: buckets
                .into_boxed_slice()
                .try_into()
                .expect("the loop fills exactly ECMP_BUCKETS buckets"),
        })
    }

    /// The member for this flow hash. The same hash always selects the same member.
    #[inline]
    pub fn select(&self, flow_hash: u32) -> AdjId {
        self.buckets[(flow_hash as usize) % ECMP_BUCKETS]
    }

    /// The `(adjacency, weight)` pairs the group was built from.
    pub fn members(&self) -> &[(AdjId, u32)] {
        &self.members
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<AdjId>()
            + self.members.len() * std::mem::size_of::<(AdjId, u32)>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_honoured_within_one_bucket() {
        let g = EcmpGroup::new(&[(7, 1), (8, 3)]).unwrap();
        let n7 = (0..ECMP_BUCKETS as u32)
            .filter(|&h| g.select(h) == 7)
            .count();
        assert_eq!(n7, 64);
        assert_eq!(
            (0..ECMP_BUCKETS as u32)
                .filter(|&h| g.select(h) == 8)
                .count(),
            192
        );
    }

    #[test]
    fn invalid_groups_are_rejected() {
        assert_eq!(EcmpGroup::new(&[]), Err(EcmpError::Empty));
        assert_eq!(EcmpGroup::new(&[(1, 0)]), Err(EcmpError::ZeroWeight));
    }

    #[test]
    fn tiny_weight_still_gets_a_bucket() {
        let g = EcmpGroup::new(&[(1, 1), (2, 1_000_000)]).unwrap();
        assert!((0..ECMP_BUCKETS as u32).any(|h| g.select(h) == 1));
    }
}
