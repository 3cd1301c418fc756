//! Binding SNS message bodies (sns rules 14-21, D-3).
//!
//! The body is a JSON document ([`Node`]): what the message reader kept of the raw bytes for the
//! table's [`crate::json::Selector`], or a whole tree. Only the paths of the table's
//! [`Key::BodyPath`] and [`Key::BodyPathEach`] keys are extracted, in one walk over the parts of
//! the document those paths can reach; the pruned document and the whole one bind alike (a
//! property test checks it).
//!
//! # Paths
//!
//! A key's path is the policy's leaf path flattened with `.` (rule 16). At an object, a member
//! named `N` continues the path when the remaining path equals `N` (the member's value is then at
//! the *leaf position*) or starts with `N.` (the walk continues inside the value with the rest).
//! So `"a.b.c"` reaches `{"a": {"b": {"c": v}}}`, `{"a.b.c": v}`, `{"a.b": {"c": v}}` and
//! `{"a": {"b.c": v}}`, and all of them when several are present.
//!
//! At the leaf position a scalar (string, number, `true`, `false`, `null`) is a leaf; an object is
//! no leaf (rule 19: `exists` applies to leaves only); an array contributes its scalar elements,
//! arrays of arrays flattened at every depth (rule 17), objects inside it ignored. A key with no
//! leaf is absent, so an empty array is absent (rule 20) while `""` and `null` are present
//! (rule 21). Before the leaf position, arrays are transparent too: the walk continues into every
//! object element (nested arrays flattened), and scalar elements there are ignored.
//!
//! # Rows: conditions on the same element (rule 18, D-3)
//!
//! Conditions below one array of objects must be satisfied by the same element. The program is
//! therefore run once per *row*, a row being one choice of element for every array of objects on
//! the way to the keys, and the message matches when some row does. Choosing is only needed where
//! it can change the verdict, so an array (met before the leaf position) is a *choice point* only
//! when
//!
//! - two or more keys continue below it (for example `Records.a` and `Records.b`), or
//! - a [`Key::BodyPathEach`] key continues below it: the compiler uses that key for paths read by a
//!   negative matcher (`exists: false`, `anything-but`: judged per element, D-3) or tested in more
//!   than one place.
//!
//! Below any other array a single key, tested once by "some leaf satisfies" predicates, is the only
//! reader, and "some element has a satisfying leaf" equals "the union of the elements' leaves has
//! one", so all elements are merged into one row. Choice points nest: the rows of an element are
//! combined with the rows of its siblings (a cross product), and the rows of a choice point are
//! the union of its elements' rows. An array of objects with no object element offers no choice.
//! A subtree read by a single plain key can hold no choice point, so it is bound straight into
//! its row without building rows at all (the common case costs one pass and no allocation per
//! node).
//!
//! # Where rows fall short (EB-10)
//!
//! An EventBridge `exists: false` is judged against the array positions fixed by the paths
//! sorting before it ([`Key::FieldPath`] with levels: element by element within those levels).
//! In a row, a value of the fixing path then stands in for the element it was chosen from, which
//! is right when one route leads from the top to each path prefix. Two exceptions are not judged
//! rather than judged wrongly (the body is bound with every key absent, [`Overflow::Positions`],
//! and the caller gets an error):
//!
//! - **two routes**: an object where two members continue one key's path (a repeated member
//!   name, or `a.b` beside `a`, EB-3), one of them also continuing an absence key within its
//!   levels, in a body that also has an array of objects judged element by element for an
//!   absence key. A value reached by the other route is not in that array, yet would stand in
//!   for one of its elements;
//! - **nested scalars**: an array at a value key's leaf holding scalars in nested arrays (each
//!   has its element's position, EB-3) while an absence key merged there continues below it:
//!   such a scalar could fix that element for the absence, which the merged key cannot say.
//!
//! Neither arises in an event without repeated or dotted member names and nested arrays beside
//! objects.
//!
//! # Bounds
//!
//! Binding never recurses on arrays (nested arrays are flattened with an explicit stack) and
//! recurses on objects only where a path continues, so the depth is at most the number of object
//! levels a path crosses; it is capped at [`MAX_DEPTH`]. (Depth elsewhere costs nothing: the
//! message reader validates members no path continues into without keeping them, at any depth.) The number of rows is the product of the choice points'
//! element counts, which can grow fast (two sibling arrays of 1,000 elements each, each read by two
//! keys, make 1,000,000 rows); rows × keys is capped at [`MAX_ROW_SLOTS`], and leaves copied to
//! give a key one contiguous range in a row are capped at [`MAX_COPIED_LEAVES`]. A body beyond any
//! of these caps is **not** bound approximately: it is bound like a body that is not a JSON object
//! (one row, every body key absent, `BodyIsObject` absent), so it matches only policies that read
//! nothing from the body, and [`super::Bound::overflowed`] reports it.
//!
//! # Memory
//!
//! Rows, fragments and leaves are built in the binding arena (reset for each message), so
//! binding a stream of bodies allocates nothing once warm; a slot fed from one run of leaves
//! borrows it, and only a slot fed from several runs gets a copy.

use super::leaf::{BoundLeaf, LeafKind, Slot, node_leaf};
use super::table::{BodyPlan, KeyTable, SlotNeeds, path_of};
use crate::json::Node;
use crate::value::Shape;
use bumpalo::Bump;
use bumpalo::collections::Vec as BVec;

/// Most slots (rows × keys of the table) one body may bind to; beyond it the body overflows.
pub const MAX_ROW_SLOTS: usize = 1 << 20;

/// Most leaves one body may copy while giving keys fed from several places of a row one
/// contiguous range; beyond it the body overflows.
pub const MAX_COPIED_LEAVES: usize = 1 << 20;

/// Deepest object nesting a path is followed into; deeper bodies overflow.
pub const MAX_DEPTH: usize = 256;

/// Why a body was not bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Overflow {
    /// Beyond a cap ([`MAX_ROW_SLOTS`], [`MAX_COPIED_LEAVES`], [`MAX_DEPTH`]).
    Caps,
    /// An `exists: false` judged against array positions that rows cannot judge exactly
    /// (EB-10; module documentation, "Where rows fall short").
    Positions,
}

/// One key of the table that reads the body.
#[derive(Clone, Copy)]
struct Target<'t> {
    slot: u32,
    path: &'t str,
    /// A [`Key::BodyPathEach`] key: every array of objects above it is a choice point.
    each: bool,
    /// For a [`Key::FieldPath`] key, the levels (leading path segments) within which it is
    /// judged element by element; `u32::MAX` for the other keys.
    fixed: u32,
    /// The number of `.` in `path` (its segments less one).
    dots: u32,
    /// A [`Key::FieldPath`] key: scalars of arrays nested in the array at its leaf position carry
    /// that element's position (EB-3), within its levels.
    field: bool,
}

/// The number of `.` in `text`.
fn dots(text: &str) -> u32 {
    idx(memchr::memchr_iter(b'.', text.as_bytes()).count())
}

/// A key (index into the targets) at a node of the walk, and what is left of its path there:
/// `None` at the leaf position, `Some(rest)` while members named by `rest` are still to be found.
#[derive(Clone, Copy)]
struct Active<'t> {
    target: usize,
    rest: Option<&'t str>,
}

/// A run of leaves of the store given to one slot.
#[derive(Clone, Copy)]
struct Frag {
    slot: u32,
    start: u32,
    end: u32,
}

/// One row under construction: the leaf runs of each slot, in walk order.
type World<'a> = BVec<'a, Frag>;

/// The rows of a subtree.
type Rows<'a> = BVec<'a, World<'a>>;

struct Walker<'t, 'a> {
    table: &'t KeyTable,
    arena: &'a Bump,
    /// The leaf store: every leaf the walk found, runs of it given to slots.
    leaves: BVec<'a, BoundLeaf<'a>>,
    targets: &'a [Target<'t>],
    max_rows: usize,
    /// The absence keys (indexes into the targets) that arrays judged element by element and
    /// left absent in some of their rows but not all, in walk order ("Where rows fall short").
    exclusions: BVec<'a, usize>,
}

fn idx(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Appends `frag` to `world`, extending the last run when it continues it.
fn push_frag(world: &mut World<'_>, frag: Frag) {
    if let Some(last) = world.last_mut()
        && last.slot == frag.slot
        && last.end == frag.start
    {
        last.end = frag.end;
        return;
    }
    world.push(frag);
}

/// Where a member named `name` takes a path whose remaining part is `rest` (rule 16): `Some(None)`
/// to the leaf position (`rest` is the name), `Some(Some(r))` on to `r` (`rest` is the name, a
/// `.`, then `r`), `None` elsewhere. Names are short: compared without a `memcmp` call.
#[inline]
fn follow<'p>(rest: &'p str, name: &str) -> Option<Option<&'p str>> {
    let (r, n) = (rest.as_bytes(), name.as_bytes());
    let head = r.get(..n.len())?;
    if !crate::bytes::same(head, n) {
        return None;
    }
    match r.get(n.len()) {
        None => Some(None),
        Some(b'.') => rest.get(n.len() + 1..).map(Some),
        Some(_) => None,
    }
}

/// What binding must compute for leaves read by several slots: all of it.
fn union(a: SlotNeeds, b: SlotNeeds) -> SlotNeeds {
    SlotNeeds {
        constants: a.constants.saturating_add(b.constants),
        text_numbers: a.text_numbers.saturating_add(b.text_numbers),
    }
}

impl<'t, 'a> Walker<'t, 'a> {
    fn rows(&self) -> Rows<'a> {
        BVec::new_in(self.arena)
    }

    fn world(&self) -> World<'a> {
        BVec::new_in(self.arena)
    }

    fn one_row(&self, world: World<'a>) -> Rows<'a> {
        let mut rows = self.rows();
        rows.push(world);
        rows
    }

    fn target(&self, active: &Active<'t>) -> Option<&Target<'t>> {
        self.targets.get(active.target)
    }

    /// What the slots of `targets` need computed for their leaves.
    fn needs(&self, targets: impl Iterator<Item = usize>) -> SlotNeeds {
        targets
            .filter_map(|t| self.targets.get(t))
            .map(|t| self.table.needs(t.slot))
            .fold(SlotNeeds::default(), union)
    }

    /// Stores the leaf of a scalar node (if it is one), computed as `needs` says.
    #[inline]
    fn push_leaf(&mut self, node: &Node<'a>, needs: SlotNeeds) {
        push_leaf(self.table, needs, node, &mut self.leaves);
    }

    /// Whether the fixed key `active` is past its levels at an array met with `active.rest`
    /// left of its path (the array's level is the number of segments consumed to reach it).
    fn merged_at(&self, active: &Active<'t>) -> bool {
        match (self.target(active), active.rest) {
            (Some(t), Some(rest)) if t.fixed != u32::MAX => t.dots - dots(rest) > t.fixed,
            _ => false,
        }
    }

    /// Whether `active` (met at an object, its path not yet at the leaf) is an absence key
    /// ([`Key::FieldPath`] tested `absent`: fixed levels below `u32::MAX`) still within the levels
    /// it is judged element by element at.
    fn absence_within(&self, active: &Active<'t>) -> bool {
        match (self.target(active), active.rest) {
            (Some(t), Some(rest)) => t.fixed != u32::MAX && t.dots - dots(rest) < t.fixed,
            _ => false,
        }
    }

    /// Whether `t` is a value key of a field ([`Key::FieldPath`] not fixed): the kind of key
    /// whose values fix array positions for an absence.
    fn value_key(&self, t: usize) -> bool {
        self.targets
            .get(t)
            .is_some_and(|t| t.field && t.fixed == u32::MAX)
    }

    /// Whether the value key `j` can fix positions for the absence key `p` (EB-10): its path
    /// sorts before `p`'s (UTF-16 code units, EB-8).
    fn fixes(&self, j: usize, p: usize) -> bool {
        match (self.targets.get(j), self.targets.get(p)) {
            (Some(j), Some(p)) => j.path.encode_utf16().lt(p.path.encode_utf16()),
            _ => false,
        }
    }

    /// Whether some row of `rows` has leaves of `slot`.
    fn any_row_has(rows: &Rows<'a>, slot: u32) -> bool {
        rows.iter().any(|w| w.iter().any(|f| f.slot == slot))
    }

    /// Counts an exclusion when an absence key of `inner` judged element by element here is
    /// absent in some of `rows` and present in others.
    fn note_exclusion(&mut self, inner: &[Active<'t>], rows: &Rows<'a>) {
        for a in inner {
            let Some(t) = self.target(a) else { continue };
            if t.fixed == u32::MAX || self.merged_at(a) {
                continue;
            }
            let with = rows
                .iter()
                .filter(|w| w.iter().any(|f| f.slot == t.slot))
                .count();
            if with > 0 && with < rows.len() {
                self.exclusions.push(a.target);
            }
        }
    }

    /// Whether an array met before the leaf position by `inner` keys is a choice point.
    fn is_choice_point(&self, inner: &[Active<'t>]) -> bool {
        inner.len() >= 2 || inner.iter().any(|a| self.target(a).is_some_and(|t| t.each))
    }

    /// Rows of `a` combined with rows of `b` (every pair).
    fn product(&self, a: Rows<'a>, b: Rows<'a>) -> Result<Rows<'a>, Overflow> {
        if let [only] = b.as_slice() {
            let mut a = a;
            for w in a.iter_mut() {
                only.iter().for_each(|f| push_frag(w, *f));
            }
            return Ok(a);
        }
        if a.len().saturating_mul(b.len()) > self.max_rows {
            return Err(Overflow::Caps);
        }
        let mut out = BVec::with_capacity_in(a.len() * b.len(), self.arena);
        for x in &a {
            for y in &b {
                let mut w = x.clone();
                y.iter().for_each(|f| push_frag(&mut w, *f));
                out.push(w);
            }
        }
        Ok(out)
    }

    /// One frag for every key at its leaf position here, over the leaves stored since `start`.
    fn leaf_frags(&self, leaf_keys: &[usize], start: usize) -> World<'a> {
        let end = self.leaves.len();
        let mut world = self.world();
        if end == start {
            return world;
        }
        world.extend(
            leaf_keys
                .iter()
                .filter_map(|&t| self.targets.get(t))
                .map(|t| Frag {
                    slot: t.slot,
                    start: idx(start),
                    end: idx(end),
                }),
        );
        world
    }

    /// Whether `active` is one plain key: no choice point can lie below it, so its subtree binds
    /// to a single row and [`Walker::collect`] can bind it without building rows.
    fn single_plain(&self, active: &[Active<'t>]) -> Option<Active<'t>> {
        match active {
            [only] if self.target(only).is_some_and(|t| !t.each) => Some(*only),
            _ => None,
        }
    }

    /// Binds one plain key below `value` into `out` (the one-row case of [`Walker::walk`]).
    fn collect(
        &mut self,
        value: &Node<'a>,
        key: Active<'t>,
        out: &mut World<'a>,
        depth: usize,
    ) -> Result<(), Overflow> {
        if depth > MAX_DEPTH {
            return Err(Overflow::Caps);
        }
        let slot = self.target(&key).map_or(u32::MAX, |t| t.slot);
        let needs = self.table.needs(slot);
        match (value, key.rest) {
            (Node::Object(members), Some(rest)) => {
                for m in members.iter() {
                    let Some(below) = follow(rest, m.name) else {
                        continue;
                    };
                    let key = Active {
                        target: key.target,
                        rest: below,
                    };
                    self.collect(&m.value, key, out, depth + 1)?;
                }
            }
            (Node::Array(items), rest) => {
                // Rule 17: nested arrays flattened. At the leaf position the scalars are the
                // leaves; before it the walk continues into the objects.
                let start = self.leaves.len();
                let mut stack = BVec::new_in(self.arena);
                stack.push(items.iter());
                while let Some(top) = stack.last_mut() {
                    let Some(item) = top.next() else {
                        stack.pop();
                        continue;
                    };
                    match (item, rest) {
                        (Node::Array(nested), _) => stack.push(nested.iter()),
                        (Node::Object(_), Some(_)) => self.collect(item, key, out, depth + 1)?,
                        (Node::Object(_), None) | (_, Some(_)) => {}
                        (scalar, None) => self.push_leaf(scalar, needs),
                    }
                }
                let end = self.leaves.len();
                if rest.is_none() && end > start {
                    push_frag(
                        out,
                        Frag {
                            slot,
                            start: idx(start),
                            end: idx(end),
                        },
                    );
                }
            }
            (Node::Object(_), None) | (_, Some(_)) => {}
            (scalar, None) => {
                let start = self.leaves.len();
                self.push_leaf(scalar, needs);
                push_frag(
                    out,
                    Frag {
                        slot,
                        start: idx(start),
                        end: idx(self.leaves.len()),
                    },
                );
            }
        }
        Ok(())
    }

    /// The rows of `value` for the keys `active` at it.
    fn walk(
        &mut self,
        value: &Node<'a>,
        active: &[Active<'t>],
        depth: usize,
    ) -> Result<Rows<'a>, Overflow> {
        if depth > MAX_DEPTH {
            return Err(Overflow::Caps);
        }
        if let Some(only) = self.single_plain(active) {
            let mut row = self.world();
            self.collect(value, only, &mut row, depth)?;
            return Ok(self.one_row(row));
        }
        let mut leaf_keys = BVec::new_in(self.arena);
        leaf_keys.extend(active.iter().filter(|a| a.rest.is_none()).map(|a| a.target));
        let mut inner = BVec::new_in(self.arena);
        inner.extend(active.iter().filter(|a| a.rest.is_some()).copied());
        match value {
            Node::Object(members) => {
                // Rule 19: an object at the leaf position is no leaf.
                let mut rows = self.one_row(self.world());
                if inner.is_empty() {
                    return Ok(rows);
                }
                // Two routes (EB-3: a repeated member name, `a.b` beside `a`): which members'
                // subtrees excluded an absence, and which gave a value key values.
                let track = inner.iter().any(|a| self.absence_within(a));
                let mut excluded = BVec::new_in(self.arena);
                let mut valued = BVec::new_in(self.arena);
                for (i, m) in members.iter().enumerate() {
                    let mut below = BVec::new_in(self.arena);
                    below.extend(inner.iter().filter_map(|a| {
                        follow(a.rest?, m.name).map(|rest| Active {
                            target: a.target,
                            rest,
                        })
                    }));
                    if below.is_empty() {
                        continue;
                    }
                    let (exclusions, leaves) = (self.exclusions.len(), self.leaves.len());
                    if let (Some(only), [row]) = (self.single_plain(&below), rows.as_mut_slice()) {
                        self.collect(&m.value, only, row, depth + 1)?;
                        if track && self.value_key(only.target) && self.leaves.len() > leaves {
                            valued.push((i, only.target));
                        }
                        continue;
                    }
                    let child_rows = self.walk(&m.value, &below, depth + 1)?;
                    if track {
                        for k in exclusions..self.exclusions.len() {
                            if let Some(&p) = self.exclusions.get(k) {
                                excluded.push((i, p));
                            }
                        }
                        for a in below.iter() {
                            let slot = self.target(a).map_or(u32::MAX, |t| t.slot);
                            if self.value_key(a.target) && Self::any_row_has(&child_rows, slot) {
                                valued.push((i, a.target));
                            }
                        }
                    }
                    rows = self.product(rows, child_rows)?;
                }
                // A value reached by one member is in none of the arrays below another: it
                // must not stand in for their elements (module documentation).
                for &(e, p) in excluded.iter() {
                    let Some(name) = members.get(e).map(|m| m.name) else {
                        continue;
                    };
                    let crosses = valued.iter().any(|&(v, t)| {
                        v != e
                            && self.fixes(t, p)
                            && inner.iter().any(|a| {
                                a.target == t && a.rest.is_some_and(|r| follow(r, name).is_some())
                            })
                    });
                    if crosses {
                        return Err(Overflow::Positions);
                    }
                }
                Ok(rows)
            }
            Node::Array(items) => {
                // EB-10: a fixed key past its levels sees every element here, in every row.
                let mut merged = self.world();
                if inner.iter().any(|a| self.merged_at(a)) {
                    let mut within = BVec::new_in(self.arena);
                    for &key in inner.iter() {
                        if self.merged_at(&key) {
                            self.collect(value, key, &mut merged, depth)?;
                        } else {
                            within.push(key);
                        }
                    }
                    inner = within;
                    // A scalar of a nested array here has this element's position (EB-3) and
                    // could fix it for an absence merged here: rows cannot say.
                    if !merged.is_empty()
                        && leaf_keys.iter().any(|&t| self.positional(t))
                        && nested_scalar(items)
                    {
                        return Err(Overflow::Positions);
                    }
                }
                let rows = self.array_rows(items, &leaf_keys, &inner, depth)?;
                self.note_exclusion(&inner, &rows);
                if merged.is_empty() {
                    return Ok(rows);
                }
                self.product(rows, self.one_row(merged))
            }
            scalar => {
                let start = self.leaves.len();
                if !leaf_keys.is_empty() {
                    let needs = self.needs(leaf_keys.iter().copied());
                    self.push_leaf(scalar, needs);
                }
                Ok(self.one_row(self.leaf_frags(&leaf_keys, start)))
            }
        }
    }

    /// Whether the leaf key `t` gives scalars of arrays nested in the array at its leaf position
    /// that element's position (EB-3): a field key fixed over the array's level.
    fn positional(&self, t: usize) -> bool {
        self.targets
            .get(t)
            .is_some_and(|t| t.field && t.fixed > t.dots)
    }

    /// The rows of an array met with `leaf_keys` at their leaf position and `inner` keys
    /// continuing below it. A field key's scalars in an array nested in this one belong to that
    /// element (EB-3): when such keys meet keys continuing below the array, the array is judged
    /// element by element, nested arrays as elements ([`Walker::positional_rows`]).
    fn array_rows(
        &mut self,
        items: &[Node<'a>],
        leaf_keys: &[usize],
        inner: &[Active<'t>],
        depth: usize,
    ) -> Result<Rows<'a>, Overflow> {
        if inner.is_empty()
            || !items.iter().any(|i| matches!(i, Node::Array(_)))
            || !leaf_keys.iter().any(|&t| self.positional(t))
        {
            return self.flat_array_rows(items, leaf_keys, inner, depth);
        }
        let mut positional = BVec::new_in(self.arena);
        let mut flat = BVec::new_in(self.arena);
        for &t in leaf_keys {
            if self.positional(t) {
                positional.push(t);
            } else {
                flat.push(t);
            }
        }
        // The other leaf keys see every scalar, nested arrays flattened, in every row.
        let start = self.leaves.len();
        let needs = self.needs(flat.iter().copied());
        if !flat.is_empty() {
            let mut stack = BVec::new_in(self.arena);
            stack.push(items.iter());
            while let Some(top) = stack.last_mut() {
                match top.next() {
                    None => {
                        stack.pop();
                    }
                    Some(Node::Array(nested)) => stack.push(nested.iter()),
                    Some(Node::Object(_)) => {}
                    Some(scalar) => self.push_leaf(scalar, needs),
                }
            }
        }
        let everywhere = self.leaf_frags(&flat, start);
        let rows = self.positional_rows(items, &positional, inner, depth)?;
        if everywhere.is_empty() {
            return Ok(rows);
        }
        self.product(rows, self.one_row(everywhere))
    }

    /// The rows of an array for `positional` leaf keys and `inner` keys, one element at a time:
    /// its own scalars in every row, each object's rows, and each nested array's rows (its
    /// scalars carry its position here).
    fn positional_rows(
        &mut self,
        items: &[Node<'a>],
        positional: &[usize],
        inner: &[Active<'t>],
        depth: usize,
    ) -> Result<Rows<'a>, Overflow> {
        if depth > MAX_DEPTH {
            return Err(Overflow::Caps);
        }
        let start = self.leaves.len();
        let needs = self.needs(positional.iter().copied());
        for item in items {
            if !matches!(item, Node::Array(_) | Node::Object(_)) {
                self.push_leaf(item, needs);
            }
        }
        let here = self.leaf_frags(positional, start);
        let mut rows = self.rows();
        let mut elements = false;
        for item in items {
            let element_rows = match item {
                Node::Object(_) => self.walk(item, inner, depth + 1)?,
                Node::Array(nested) => {
                    self.positional_rows(nested, positional, inner, depth + 1)?
                }
                _ => continue,
            };
            elements = true;
            for mut row in element_rows {
                here.iter().for_each(|f| push_frag(&mut row, *f));
                rows.push(row);
            }
            if rows.len() > self.max_rows {
                return Err(Overflow::Caps);
            }
        }
        if !elements {
            return Ok(self.one_row(here));
        }
        Ok(rows)
    }

    /// [`Walker::array_rows`] where no scalar's position matters: nested arrays flattened.
    fn flat_array_rows(
        &mut self,
        items: &[Node<'a>],
        leaf_keys: &[usize],
        inner: &[Active<'t>],
        depth: usize,
    ) -> Result<Rows<'a>, Overflow> {
        // Rule 17: nested arrays are flattened (explicit stack, no recursion).
        let start = self.leaves.len();
        let needs = self.needs(leaf_keys.iter().copied());
        let mut objects = BVec::new_in(self.arena);
        let mut stack = BVec::new_in(self.arena);
        stack.push(items.iter());
        while let Some(top) = stack.last_mut() {
            match top.next() {
                None => {
                    stack.pop();
                }
                Some(Node::Array(nested)) => stack.push(nested.iter()),
                Some(object @ Node::Object(_)) => {
                    if !inner.is_empty() {
                        objects.push(object);
                    }
                }
                Some(scalar) => {
                    if !leaf_keys.is_empty() {
                        self.push_leaf(scalar, needs);
                    }
                }
            }
        }
        let here = self.leaf_frags(leaf_keys, start);
        if objects.is_empty() {
            return Ok(self.one_row(here));
        }
        if self.is_choice_point(inner) {
            // Rule 18: one row per element (and per row of that element).
            let mut rows = self.rows();
            for object in objects {
                for mut row in self.walk(object, inner, depth + 1)? {
                    here.iter().for_each(|f| push_frag(&mut row, *f));
                    rows.push(row);
                }
                if rows.len() > self.max_rows {
                    return Err(Overflow::Caps);
                }
            }
            Ok(rows)
        } else {
            let mut rows = self.one_row(here);
            for object in objects {
                let element_rows = self.walk(object, inner, depth + 1)?;
                rows = self.product(rows, element_rows)?;
            }
            Ok(rows)
        }
    }
}

/// Whether an array nested in `items` (at any depth) holds a scalar.
fn nested_scalar(items: &[Node<'_>]) -> bool {
    let mut stack: Vec<&[Node<'_>]> = items
        .iter()
        .filter_map(|i| match i {
            Node::Array(nested) => Some(*nested),
            _ => None,
        })
        .collect();
    while let Some(nested) = stack.pop() {
        for item in nested {
            match item {
                Node::Array(deeper) => stack.push(deeper),
                Node::Object(_) => {}
                _ => return true,
            }
        }
    }
    false
}

/// Binds the body `doc` to `table`: its rows of slots (one row of absent slots for a body that
/// is not an object, rule 14), or [`Overflow`].
pub(super) fn bind<'a>(
    table: &'a KeyTable,
    doc: Node<'a>,
    arena: &'a Bump,
) -> Result<&'a [Slot<'a>], Overflow> {
    let width = table.len();
    let Node::Object(_) = doc else {
        // Rule 14: a body that is not a JSON object has no keys (not even `BodyIsObject`).
        return Ok(arena.alloc_slice_fill_copy(width, Slot::ABSENT));
    };
    let plan = table.body_plan();
    if plan.single_row {
        return single_row(table, plan, &doc, arena);
    }
    general(table, plan, &doc, arena)
}

/// Binds a body with the row-building walk (any table; see the module documentation).
pub(super) fn general<'a>(
    table: &'a KeyTable,
    plan: &BodyPlan,
    doc: &Node<'a>,
    arena: &'a Bump,
) -> Result<&'a [Slot<'a>], Overflow> {
    let width = table.len();
    let is_object = &plan.is_object;
    let targets: &'a [Target<'a>] =
        arena.alloc_slice_fill_iter(plan.targets.iter().map(|&(slot, each, fixed, field)| {
            let path = path_of(table.keys().get(slot as usize));
            Target {
                slot,
                path,
                each,
                fixed,
                dots: dots(path),
                field,
            }
        }));
    let mut active = BVec::new_in(arena);
    active.extend(targets.iter().enumerate().map(|(target, t)| Active {
        target,
        rest: Some(t.path),
    }));
    let max_rows = MAX_ROW_SLOTS / width.max(1);
    let mut walker = Walker {
        table,
        arena,
        leaves: BVec::new_in(arena),
        targets,
        max_rows,
        exclusions: BVec::new_in(arena),
    };
    let rows = if active.is_empty() {
        walker.one_row(walker.world())
    } else {
        walker.walk(doc, &active, 0)?
    };
    if rows.len() > max_rows {
        return Err(Overflow::Caps);
    }
    let store: &'a [BoundLeaf<'a>] = walker.leaves.into_bump_slice();
    let out = arena.alloc_slice_fill_copy(rows.len().saturating_mul(width), Slot::ABSENT);
    let mut copied = 0usize;
    for (r, mut world) in rows.into_iter().enumerate() {
        let Some(row) = out.get_mut(r * width..(r + 1) * width) else {
            continue;
        };
        for &slot in is_object {
            if let Some(s) = row.get_mut(slot as usize) {
                *s = Slot::bare(Shape::Scalar);
            }
        }
        // The runs of one slot together, in store order.
        world.sort_unstable_by_key(|f| (f.slot, f.start));
        let mut at = 0;
        while let Some(&first) = world.get(at) {
            let n = world
                .get(at..)
                .and_then(|w| w.iter().position(|f| f.slot != first.slot))
                .unwrap_or(world.len() - at);
            let runs = world.get(at..at + n).unwrap_or(&[]);
            at += n;
            let leaves: &'a [BoundLeaf<'a>] = match runs {
                [only] => store
                    .get(only.start as usize..only.end as usize)
                    .unwrap_or(&[]),
                several => {
                    let total: usize = several.iter().map(|f| (f.end - f.start) as usize).sum();
                    copied = copied.saturating_add(total);
                    if copied > MAX_COPIED_LEAVES {
                        return Err(Overflow::Caps);
                    }
                    let mut all = several.iter().flat_map(|f| {
                        store
                            .get(f.start as usize..f.end as usize)
                            .unwrap_or(&[])
                            .iter()
                            .copied()
                    });
                    arena.alloc_slice_fill_with(total, |_| all.next().unwrap_or(BoundLeaf::EMPTY))
                }
            };
            if leaves.is_empty() {
                continue;
            }
            if let Some(s) = row.get_mut(first.slot as usize) {
                *s = Slot::of(leaves);
            }
        }
    }
    Ok(out)
}

/// Binds a body no choice point can arise in ([`BodyPlan::single_row`]): one row, each key bound
/// alone by a walk along its path, its leaves one run of the store.
pub(super) fn single_row<'a>(
    table: &'a KeyTable,
    plan: &BodyPlan,
    doc: &Node<'a>,
    arena: &'a Bump,
) -> Result<&'a [Slot<'a>], Overflow> {
    let row = arena.alloc_slice_fill_copy(table.len(), Slot::ABSENT);
    for &slot in &plan.is_object {
        if let Some(s) = row.get_mut(slot as usize) {
            *s = Slot::bare(Shape::Scalar);
        }
    }
    let mut store: BVec<'a, BoundLeaf<'a>> = BVec::with_capacity_in(plan.targets.len() + 4, arena);
    if let (Some(by_first), Node::Object(members)) = (&plan.by_first, doc) {
        // Many keys: each top-level member meets the keys of its first segment only; a key
        // fed by several members gets one copy of its runs.
        let mut runs: BVec<'a, (u32, u32, u32)> = BVec::new_in(arena);
        for m in members.iter() {
            let first = m.name.split('.').next().unwrap_or("");
            for &t in by_first.get(first).map_or(&[][..], Vec::as_slice) {
                let Some(&(slot, _, _, _)) = plan.targets.get(t as usize) else {
                    continue;
                };
                let path = path_of(table.keys().get(slot as usize));
                if let Some(below) = follow(path, m.name) {
                    let start = store.len();
                    leaves_along(table, table.needs(slot), &m.value, below, &mut store, 1)?;
                    if store.len() > start {
                        runs.push((t, idx(start), idx(store.len())));
                    }
                }
            }
        }
        let store = store.into_bump_slice();
        runs.sort_unstable();
        let mut at = 0;
        while let Some(&(t, start, end)) = runs.get(at) {
            let n = runs
                .get(at..)
                .and_then(|r| r.iter().position(|&(u, _, _)| u != t))
                .unwrap_or(runs.len() - at);
            let group = runs.get(at..at + n).unwrap_or(&[]);
            at += n;
            let leaves: &'a [BoundLeaf<'a>] = match group {
                [_] => store.get(start as usize..end as usize).unwrap_or(&[]),
                several => {
                    let total: usize = several.iter().map(|&(_, s, e)| (e - s) as usize).sum();
                    let mut all = several.iter().flat_map(|&(_, s, e)| {
                        store
                            .get(s as usize..e as usize)
                            .unwrap_or(&[])
                            .iter()
                            .copied()
                    });
                    arena.alloc_slice_fill_with(total, |_| all.next().unwrap_or(BoundLeaf::EMPTY))
                }
            };
            let slot = plan
                .targets
                .get(t as usize)
                .map_or(u32::MAX, |&(slot, _, _, _)| slot);
            if let Some(s) = row.get_mut(slot as usize) {
                *s = Slot::of(leaves);
            }
        }
        return Ok(row);
    }
    let runs = arena.alloc_slice_fill_copy(plan.targets.len(), (0u32, 0u32));
    for (&(slot, _, _, _), run) in plan.targets.iter().zip(runs.iter_mut()) {
        let start = store.len();
        let path = path_of(table.keys().get(slot as usize));
        leaves_along(table, table.needs(slot), doc, Some(path), &mut store, 0)?;
        *run = (idx(start), idx(store.len()));
    }
    let store = store.into_bump_slice();
    for (&(slot, _, _, _), &(start, end)) in plan.targets.iter().zip(runs.iter()) {
        let leaves = store.get(start as usize..end as usize).unwrap_or(&[]);
        if let (false, Some(s)) = (leaves.is_empty(), row.get_mut(slot as usize)) {
            *s = Slot::of(leaves);
        }
    }
    Ok(row)
}

/// Stores the leaves one key finds below `value` (`rest` what is left of its path there, `None`
/// at the leaf position), as [`Walker::collect`] finds them.
fn leaves_along<'a>(
    table: &KeyTable,
    needs: SlotNeeds,
    value: &Node<'a>,
    rest: Option<&str>,
    store: &mut BVec<'a, BoundLeaf<'a>>,
    depth: usize,
) -> Result<(), Overflow> {
    if depth > MAX_DEPTH {
        return Err(Overflow::Caps);
    }
    match (value, rest) {
        (Node::Object(members), Some(rest)) => {
            for m in members.iter() {
                match (follow(rest, m.name), &m.value) {
                    // A scalar at the leaf position (the common case): its leaf, stored here
                    // rather than one call deeper (where the depth is checked the same way).
                    (
                        Some(None),
                        Node::Null | Node::Bool(_) | Node::Number(_) | Node::String(_),
                    ) if depth < MAX_DEPTH => push_leaf(table, needs, &m.value, store),
                    (Some(below), value) => {
                        leaves_along(table, needs, value, below, store, depth + 1)?;
                    }
                    (None, _) => {}
                }
            }
        }
        (Node::Array(items), rest) => {
            // Rule 17: nested arrays flattened (an explicit stack, in the arena when needed).
            let mut stack = BVec::new_in(store.bump());
            let mut top = items.iter();
            loop {
                let Some(item) = top.next() else {
                    match stack.pop() {
                        Some(outer) => {
                            top = outer;
                            continue;
                        }
                        None => break,
                    }
                };
                match (item, rest) {
                    (Node::Array(nested), _) => {
                        stack.push(std::mem::replace(&mut top, nested.iter()));
                    }
                    (Node::Object(_), Some(_)) => {
                        leaves_along(table, needs, item, rest, store, depth + 1)?
                    }
                    (Node::Object(_), None) | (_, Some(_)) => {}
                    (scalar, None) => push_leaf(table, needs, scalar, store),
                }
            }
        }
        (Node::Object(_), None) | (_, Some(_)) => {}
        (scalar, None) => push_leaf(table, needs, scalar, store),
    }
    Ok(())
}

/// Stores the leaf of a scalar node (if it is one), looked up as `needs` says.
#[inline]
fn push_leaf<'a>(
    table: &KeyTable,
    needs: SlotNeeds,
    node: &Node<'a>,
    store: &mut BVec<'a, BoundLeaf<'a>>,
) {
    if let Some(leaf) = node_leaf(node) {
        store.push(if leaf.kind == LeafKind::Str {
            table.str_leaf_with(needs, leaf.text)
        } else {
            leaf
        });
    }
}
