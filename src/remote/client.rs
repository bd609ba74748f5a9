//! One S3 client per bucket, configured the way the AWS tools are: `AWS_*` environment
//! variables first, then the shared config files (`~/.aws/credentials`, `~/.aws/config`, the
//! profile named by `AWS_PROFILE`), with retries and backoff on transient errors; and the
//! runtime its requests run on, so the synchronous pipeline can wait for them.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use object_store::ObjectStore;
use object_store::aws::AmazonS3Builder;
use object_store::{BackoffConfig, RetryConfig};

use crate::remote::aws_files::SharedConfig;
use crate::remote::error::RemoteError;
use crate::remote::url::ObjectUrl;

/// Attempts per request before an error is reported (object_store retries 5xx, 429,
/// timeouts and dropped connections; never a 4xx that would fail again).
const MAX_RETRIES: usize = 8;
/// How long one request may keep retrying.
const RETRY_TIMEOUT: Duration = Duration::from_secs(120);

/// The runtime every object-storage request runs on: the pipeline's threads are plain
/// threads, and each waits for its own request with [`wait`].
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("memport-s3")
            .enable_all()
            .build()
            // Building a runtime fails only when the OS refuses threads or an epoll handle, at
            // which point no run could go on.
            .expect("cannot start the object-storage runtime (the OS refused its threads)")
    })
}

/// Runs `future` to its end from a synchronous caller.
pub fn wait<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// Starts `future` on the runtime without waiting (a read-ahead).
pub fn spawn<F>(future: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    runtime().spawn(future)
}

/// The client for `url`'s bucket, made on first use.
///
/// # Errors
/// [`RemoteError`] when the configuration cannot make a client (an unparseable endpoint).
pub fn store_for(url: &ObjectUrl) -> Result<Arc<dyn ObjectStore>, RemoteError> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<dyn ObjectStore>>>> = OnceLock::new();
    let stores = STORES.get_or_init(Mutex::default);
    // A poisoned map only means another thread panicked while inserting; its entries are whole.
    let mut stores = stores.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(store) = stores.get(&url.bucket) {
        return Ok(Arc::clone(store));
    }
    let store: Arc<dyn ObjectStore> = Arc::new(builder(&url.bucket).build().map_err(|error| RemoteError::configuration(url, &error))?);
    stores.insert(url.bucket.clone(), Arc::clone(&store));
    Ok(store)
}

/// The builder for `bucket`: the environment, then the shared files for what it left unset.
fn builder(bucket: &str) -> AmazonS3Builder {
    let environment = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket).with_retry(RetryConfig {
        backoff: BackoffConfig { init_backoff: Duration::from_millis(100), max_backoff: Duration::from_secs(10), base: 2.0 },
        max_retries: MAX_RETRIES,
        retry_timeout: RETRY_TIMEOUT,
    });
    let shared = SharedConfig::load();
    let has_keys = environment("AWS_ACCESS_KEY_ID").is_some();
    if !has_keys && let (Some(key), Some(secret)) = (&shared.access_key_id, &shared.secret_access_key) {
        builder = builder.with_access_key_id(key).with_secret_access_key(secret);
        if let Some(token) = &shared.session_token {
            builder = builder.with_token(token);
        }
    }
    let region =
        environment("AWS_REGION").or_else(|| environment("AWS_DEFAULT_REGION")).or(shared.region).unwrap_or_else(|| "us-east-1".into());
    builder = builder.with_region(region);
    let endpoint = environment("AWS_ENDPOINT_URL")
        .or_else(|| environment("AWS_ENDPOINT_URL_S3"))
        .or_else(|| environment("AWS_ENDPOINT"))
        .or(shared.endpoint_url);
    if let Some(endpoint) = endpoint {
        // An `http://` endpoint is a local or private server (MinIO, a test server): say yes
        // to plain HTTP for it rather than fail on a setting most users never heard of.
        let plain = endpoint.starts_with("http://");
        builder = builder.with_endpoint(endpoint);
        if plain {
            builder = builder.with_allow_http(true);
        }
    }
    builder
}
