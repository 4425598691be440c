//! Serving HTTP/1.1 connections until kb stops: on TCP, over TLS ([`crate::tls`]), and on
//! the local Unix socket ([`crate::local`]).
//!
//! A client has [`HEADER_READ_TIMEOUT`] to send a request's head, and a body may pause at
//! most [`BODY_PAUSE_TIMEOUT`] between two of its parts: a client that sends half a request
//! and waits is closed, and never holds a connection (or a stop) for long.
//!
//! When kb stops it accepts no more connections; a connection answering a request finishes
//! that answer (a chat turn streams to its end) and then closes; a connection answering
//! none (idle between requests, or a head still coming in) is closed at once, after at most
//! a moment (300 ms) for a head already on its way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::serve::Listener;
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;
use tower_http::timeout::TimeoutBody;

/// How long a client may take to send a request's head (its request line and headers),
/// from the moment the connection waits for one.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request's body may pause between two of its parts.
pub const BODY_PAUSE_TIMEOUT: Duration = Duration::from_secs(10);

/// When kb stops, how long a connection answering no request is kept for a head already
/// on its way (a request sent the instant before the stop is still answered).
const STOP_GRACE: Duration = Duration::from_millis(300);

/// Serves `app` on the connections of `listener` until `stopping` completes, each made
/// ready by `prepare` first (a TLS handshake; `None` drops the connection). Then stops
/// accepting, lets every request being answered finish, closes the rest, and returns once
/// every connection is closed.
pub async fn serve<L, P, F, Io>(mut listener: L, app: Router, stopping: impl Future<Output = ()>, prepare: P)
where
    L: Listener,
    P: Fn(L::Io) -> F,
    F: Future<Output = Option<Io>> + Send + 'static,
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let connections = TaskTracker::new();
    let closing = CancellationToken::new();
    tokio::pin!(stopping);
    loop {
        let (io, _peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stopping => break,
        };
        connections.spawn(connection(prepare(io), app.clone(), closing.clone()));
    }
    drop(listener);
    closing.cancel();
    connections.close();
    connections.wait().await;
}

/// A connection made ready by `prepared`, served until the client hangs up or kb stops.
async fn connection<F, Io>(prepared: F, app: Router, closing: CancellationToken)
where
    F: Future<Output = Option<Io>>,
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = tokio::select! {
        io = prepared => io,
        // Not ready when kb stops (a handshake under way): nothing was asked yet.
        () = closing.cancelled() => None,
    };
    let Some(io) = io else { return };
    let answering = Answering::default();
    let counted = answering.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = counted.begin();
        let app = app.clone();
        async move {
            let request = request.map(|body| Body::new(TimeoutBody::new(BODY_PAUSE_TIMEOUT, body)));
            let response = app.oneshot(request).await?;
            // Answering lasts until the last byte of the body is sent (or the body dropped).
            Ok::<_, std::convert::Infallible>(response.map(|body| Body::new(Counted { body, _busy: busy })))
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let served = http.serve_connection(TokioIo::new(io), service).with_upgrades();
    tokio::pin!(served);
    let result = tokio::select! {
        result = served.as_mut() => result,
        () = closing.cancelled() => {
            // No further request on this connection; the one being answered finishes.
            served.as_mut().graceful_shutdown();
            let grace = tokio::select! {
                result = served.as_mut() => Some(result),
                () = tokio::time::sleep(STOP_GRACE) => None,
            };
            match grace {
                Some(result) => result,
                None if answering.any() => served.await,
                // Idle, or half a head that never came whole: closed here.
                None => return tracing::debug!("closed a connection answering no request at the stop"),
            }
        }
    };
    if let Err(error) = result {
        tracing::debug!(%error, "connection ended with an error");
    }
}

/// How many requests a connection is answering (their bodies still being sent included).
#[derive(Clone, Default)]
struct Answering(Arc<AtomicUsize>);

impl Answering {
    /// Counts one more request until the guard is dropped.
    fn begin(&self) -> Busy {
        self.0.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(&self.0))
    }

    /// Whether any request is being answered.
    fn any(&self) -> bool {
        self.0.load(Ordering::Acquire) > 0
    }
}

/// One request being answered, while it lives.
struct Busy(Arc<AtomicUsize>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that counts its request as answered until it is sent whole or dropped.
struct Counted {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection that needs no preparing (plain TCP, the local socket).
pub async fn ready<Io>(io: Io) -> Option<Io> {
    Some(io)
}
