//! `cargo run -p config --example check -- FILE`: what `mplsrouter check FILE` prints.
fn main() {
    let path = std::env::args().nth(1).expect("usage: check FILE");
    let (text, code) = config::render_check(&config::check_file(path.as_ref()));
    print!("{text}");
    std::process::exit(code);
}
