//! Complexity claims checked as growth: the cost of a piece of work at `n` and at `4n`, compared.
//! Linear work takes about 4 times as long at 4n, quadratic work about 16 times, so a bound of 8
//! tells them apart while leaving room for a noisy machine: each run is timed by the CPU time of
//! its thread (time spent preempted by other processes does not count: with more runnable
//! threads than cores, a run longer than the scheduler's slice is stretched by the others' slices
//! while a shorter one is not, which made linear work measure 14 times at 4n in wall-clock time),
//! and each size is timed several times and the fastest run kept. Choose sizes whose data outgrows the
//! first-level caches at both `n` and `4n`, or the step from cache to memory looks like growth. A
//! wall-clock bound alone would do neither: it flakes on a loaded machine and passes a quadratic
//! algorithm on small inputs.

use std::time::{Duration, Instant};

/// The most `cost(4n) / cost(n)` may be for work claimed linear.
pub const LINEAR: f64 = 8.0;

/// The CPU time one run of `run(n)` took on this thread (the wall-clock time where the system
/// has no thread clock).
fn timed(n: usize, run: &mut impl FnMut(usize)) -> Duration {
    match cpu_time::ThreadTime::try_now() {
        Ok(start) => {
            run(n);
            start.try_elapsed().unwrap_or(Duration::MAX)
        }
        Err(_) => {
            let start = Instant::now();
            run(n);
            start.elapsed()
        }
    }
}

/// How long [`growth`] keeps measuring once it has its `tries`: a loaded machine preempts a run
/// that outlasts the scheduler's slice (about a millisecond) more often than not, so a cheap run
/// is measured many more times than `tries` to find one that ran alone.
const BUDGET: Duration = Duration::from_millis(300);

/// The most runs of each size [`growth`] makes.
const MOST_TRIES: usize = 500;

/// `cost(4n) / cost(n)`, each the fastest of at least `tries` runs (more while 300 ms last).
/// The runs of the two sizes alternate, so a stretch of load slows both sizes rather than one.
pub fn growth(n: usize, tries: usize, mut run: impl FnMut(usize)) -> f64 {
    let started = Instant::now();
    let (mut small, mut large) = (Duration::MAX, Duration::MAX);
    for done in 1..=MOST_TRIES {
        small = small.min(timed(n, &mut run));
        large = large.min(timed(4 * n, &mut run));
        if done >= tries.max(1) && started.elapsed() >= BUDGET {
            break;
        }
    }
    large.as_secs_f64() / small.as_secs_f64().max(1e-9)
}

/// How many times [`assert_linear`] measures before it fails. Load only ever slows a run, and
/// slowing the runs at `n` shrinks the ratio by at most the load's factor, so a quadratic
/// algorithm (16) does not get under the bound (8) by being measured again; a linear one that
/// a busy machine pushed over it does.
const ATTEMPTS: usize = 3;

/// Asserts that `run` grows at most linearly from `n` to `4n` ([`LINEAR`]).
pub fn assert_linear(what: &str, n: usize, mut run: impl FnMut(usize)) {
    let mut best = f64::INFINITY;
    for _ in 0..ATTEMPTS {
        let ratio = growth(n, 9, &mut run);
        println!("{what}: growth {ratio:.2} from n = {n} to 4n");
        best = best.min(ratio);
        if best < LINEAR {
            break;
        }
    }
    assert!(
        best < LINEAR,
        "{what}: 4 times the input took {best:.1} times as long at best in {ATTEMPTS} \
         measurements (linear is about 4, quadratic about 16; the bound is {LINEAR})"
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
