//! Complexity claims checked as growth: the cost of a piece of work at `n` and at `4n`, compared.
//! Linear work takes about 4 times as long at 4n, quadratic work about 16 times, so a bound of 8
//! tells them apart while leaving room for a noisy machine (each size is timed several times and
//! the fastest run kept, which load only ever slows down). Choose sizes whose data outgrows the
//! first-level caches at both `n` and `4n`, or the step from cache to memory looks like growth. A
//! wall-clock bound alone would do neither: it flakes on a loaded machine and passes a quadratic
//! algorithm on small inputs.

use std::time::{Duration, Instant};

/// The most `cost(4n) / cost(n)` may be for work claimed linear.
pub const LINEAR: f64 = 8.0;

/// The fastest of `tries` runs of `run(n)`.
fn fastest(n: usize, tries: usize, run: &mut impl FnMut(usize)) -> Duration {
    (0..tries.max(1))
        .map(|_| {
            let start = Instant::now();
            run(n);
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// `cost(4n) / cost(n)`, each the fastest of `tries` runs.
pub fn growth(n: usize, tries: usize, mut run: impl FnMut(usize)) -> f64 {
    let small = fastest(n, tries, &mut run);
    let large = fastest(4 * n, tries, &mut run);
    large.as_secs_f64() / small.as_secs_f64().max(1e-9)
}

/// Asserts that `run` grows at most linearly from `n` to `4n` ([`LINEAR`]).
pub fn assert_linear(what: &str, n: usize, run: impl FnMut(usize)) {
    let ratio = growth(n, 9, run);
    println!("{what}: growth {ratio:.2} from n = {n} to 4n");
    assert!(
        ratio < LINEAR,
        "{what}: 4 times the input took {ratio:.1} times as long (linear is about 4, quadratic \
         about 16; the bound is {LINEAR})"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quadratic_work_is_told_from_linear_work() {
        let spin = |steps: usize| {
            let mut x = 0u64;
            for i in 0..steps {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i as u64));
            }
            std::hint::black_box(x);
        };
        assert_linear("a loop", 200_000, spin);
        let ratio = growth(500, 5, |n| spin(n * n));
        assert!(ratio > LINEAR, "{ratio}");
    }
}
