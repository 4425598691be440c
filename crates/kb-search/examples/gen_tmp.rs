fn main() {
    let args: Vec<String> = std::env::args().collect();
    kb_search::testgen::write_vault(std::path::Path::new(&args[1]), args[2].parse().unwrap(), 20261121)
        .unwrap();
}
