//! Probe: add the 10k policies of a set to quamina and report the first error or panic.
fn main() {
    let name = std::env::args().nth(1).unwrap_or("pol10k_exact".into());
    let mut q = quamina::Quamina::<u64>::new();
    for (i, l) in filtervm_bench::lines(&name, usize::MAX).iter().enumerate() {
        if let Err(e) = q.add_pattern(i as u64, l) {
            println!("pattern {i}: {e}");
            return;
        }
    }
    let ev = filtervm_bench::lines("attrs", 1).remove(0);
    println!("{:?}", q.matches_for_event(ev.as_bytes()).map(|v| v.len()));
}
