//! A subscription set's audit: the filters that can never match, those that match every
//! message, and groups of filters that match exactly the same messages.
//!
//! Each filter gets [`super::example`] both ways. Filters of one message model are then bucketed
//! by their verdicts on every witness found (each filter's own messages, matched through one
//! [`SubscriptionSet`] of them all, so the cost grows with the witnesses, not with their product
//! with the filters): two equivalent filters give the same verdicts on every message, so they
//! always share a bucket, and a filter's own witness separates it from most others. Within a
//! bucket, each filter is compared by [`super::diff`] with the first filter of every group found
//! so far, and joins the first it is proved the same as.

use super::model::Model;
use super::{Exactness, Example, Verdict, Witness};
use crate::{Filter, SetScratch, SubscriptionSet};
use std::collections::{BTreeMap, BTreeSet};
/// The most groups a filter is compared with (by diff) inside its bucket.
const MAX_COMPARISONS: usize = 64;

/// What the audit found. Indices are positions in the slice audited.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    /// Filters that match no message, with a message-free proof (`Exact`) or a bounded search.
    pub never: Vec<(usize, Exactness)>,
    /// Filters that match every message (same).
    pub always: Vec<(usize, Exactness)>,
    /// Groups (two or more) of filters proved to match exactly the same messages, each with a
    /// message they all match (when they match any). Filters that never or always match are not
    /// repeated here.
    pub groups: Vec<(Vec<usize>, Option<Witness>)>,
    /// Pairs whose comparison was unknown (a bounded search found no difference).
    pub unknown: Vec<(usize, usize, String)>,
    /// Filters that could not be analysed, and why.
    pub errors: Vec<(usize, String)>,
    /// Filters left out of the equivalence search because their bucket already held more than
    /// `MAX_COMPARISONS` groups.
    pub not_compared: Vec<usize>,
}

/// Audits `filters`.
pub fn audit(filters: &[&Filter]) -> Audit {
    let mut out = Audit::default();
    let mut by_model: BTreeMap<u8, Vec<usize>> = BTreeMap::new();
    let mut matching: Vec<Option<Witness>> = vec![None; filters.len()];
    let mut probes: BTreeSet<String> = BTreeSet::new();
    for (i, f) in filters.iter().enumerate() {
        let model = model_key(Model::of(f.options()));
        let (yes, no) = match (super::example(f, true), super::example(f, false)) {
            (Ok(y), Ok(n)) => (y, n),
            (Err(e), _) | (_, Err(e)) => {
                out.errors.push((i, e.to_string()));
                continue;
            }
        };
        let mut trivial = false;
        match yes {
            Example::NoneExists(exact) => {
                trivial = exact == Exactness::Exact;
                out.never.push((i, exact));
            }
            Example::Found(w) => {
                probes.insert(w.document.to_string());
                if let Some(slot) = matching.get_mut(i) {
                    *slot = Some(w);
                }
            }
        }
        match no {
            Example::NoneExists(exact) => {
                trivial |= exact == Exactness::Exact;
                out.always.push((i, exact));
            }
            Example::Found(w) => {
                probes.insert(w.document.to_string());
            }
        }
        if !trivial {
            by_model.entry(model).or_default().push(i);
        }
    }
    // Each filter's fingerprint: a hash of the probes it matches, in probe order.
    let mut set: SubscriptionSet<u32> = SubscriptionSet::new();
    for members in by_model.values() {
        for &i in members {
            if let (Some(f), Ok(id)) = (filters.get(i), u32::try_from(i)) {
                let _ = set.insert(id, f);
            }
        }
    }
    let mut prints: Vec<u64> = vec![0; filters.len()];
    let mut scratch = SetScratch::new();
    for (p, probe) in probes.iter().enumerate() {
        let matched = set.matching_document(&mut scratch, probe.as_bytes());
        for &id in matched.ids() {
            if let Some(h) = prints.get_mut(id as usize) {
                *h = h
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .wrapping_add(p as u64 + 1);
            }
        }
    }
    for (_, members) in by_model {
        let mut buckets: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for i in members {
            buckets
                .entry(prints.get(i).copied().unwrap_or_default())
                .or_default()
                .push(i);
        }
        for bucket in buckets.into_values() {
            let mut groups: Vec<Vec<usize>> = Vec::new();
            'each: for i in bucket {
                let Some(f) = filters.get(i) else { continue };
                for g in &mut groups {
                    let Some(&rep) = g.first() else { continue };
                    let Some(r) = filters.get(rep) else { continue };
                    match super::diff(r, f) {
                        Ok(d) if d.verdict == Verdict::Same => {
                            g.push(i);
                            continue 'each;
                        }
                        Ok(d) if d.verdict == Verdict::Unknown => {
                            let why = match d.exactness {
                                Exactness::Bounded(why) => why,
                                Exactness::Exact => String::new(),
                            };
                            out.unknown.push((rep, i, why));
                        }
                        Ok(_) => {}
                        Err(e) => out.errors.push((i, e.to_string())),
                    }
                }
                if groups.len() >= MAX_COMPARISONS {
                    out.not_compared.push(i);
                } else {
                    groups.push(vec![i]);
                }
            }
            for g in groups.into_iter().filter(|g| g.len() > 1) {
                let w = g.first().and_then(|&i| matching.get(i).cloned().flatten());
                out.groups.push((g, w));
            }
        }
    }
    out.groups.sort_by_key(|(g, _)| g.first().copied());
    out
}

fn model_key(m: Model) -> u8 {
    match m {
        Model::Attributes => 0,
        Model::Document => 1,
        Model::Headers => 2,
    }
}
