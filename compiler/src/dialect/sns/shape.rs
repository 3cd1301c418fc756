//! The shape of an SNS policy: what the policy-wide checks ([`super::limits`]) need to know of
//! it. The parser gathers it while it reads a policy, and the checks can also find it by walking
//! a validated one ([`Shape::of`]); this type sits below both, so neither imports the other for
//! it.

/// What the policy-wide checks need to know of a policy, gathered in one walk: whether any of
/// them can report an error. Most policies pass all three, and are then walked once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Whether some object, at any depth, has a nested member (rule 13 reports them).
    pub nested: bool,
    /// The number of leaf lists (saturating): at most [`MAX_KEYS`](super::limits::MAX_KEYS)
    /// name at most that many keys.
    pub leaf_lists: usize,
    /// [`combinations`](super::limits::combinations) of the policy.
    pub combinations: u64,
}

impl Shape {
    /// Adds a member to the shape of its object: whether it is nested, its leaf lists and its
    /// factor of the object's combinations (see [`combinations`](super::limits::combinations)).
    #[inline]
    pub(crate) fn add(&mut self, nested: bool, lists: usize, factor: u64) {
        self.nested |= nested;
        self.leaf_lists = self.leaf_lists.saturating_add(lists);
        self.combinations = self.combinations.saturating_mul(factor);
    }
}
