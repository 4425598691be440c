//! The async-openai client both adapters use: one HTTP client bounded by the call's
//! timeout (and a shorter connect timeout), kb's 429 retry in place of the library's, and
//! no organisation or project header.

use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::middleware::ReqwestService;

use crate::openai::model::OpenAiSetupError;
use crate::openai::retry::{RateLimitRetry, RetryPolicy};

/// The longest wait for a TCP (and TLS) connection, when the call's timeout is longer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client of the server at `api_base` with `api_key`, whose calls take at most
/// `policy.budget` and whose 429s are retried as `policy` says.
pub(crate) fn client(
    api_key: &str,
    api_base: &str,
    policy: RetryPolicy,
) -> Result<Client<OpenAIConfig>, OpenAiSetupError> {
    let http = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT.min(policy.budget))
        .timeout(policy.budget)
        .build()
        .map_err(|err| OpenAiSetupError::HttpClient(err.to_string()))?;
    // Organisation and project headers are cleared: async-openai would read them from the
    // environment and panic on a value that is not a valid header.
    let config =
        OpenAIConfig::new().with_api_key(api_key).with_api_base(api_base).with_org_id("").with_project_id("");
    Ok(Client::with_config(config)
        .with_http_client(http.clone())
        .with_http_service(RateLimitRetry::new(ReqwestService::new(http), policy)))
}
