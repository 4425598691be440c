//! kb-server: the axum HTTP backend and the web page, over kb-core. (Lands with issue 6.)
