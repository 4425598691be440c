//! kb-core: the facade a Rust program links. It wires the default adapters (vault,
//! conversation store, search index, model) into an `Assistant`. (Lands with issue 6.)
