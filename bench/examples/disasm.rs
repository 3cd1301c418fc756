//! Prints the single workloads' disassembly.
fn main() {
    for s in filtervm_bench::singles() {
        println!("== {} ({}, {} clauses)", s.name, s.dialect, s.clauses);
        print!("{}", s.program.disassemble());
    }
}
